"""Sine-wave sequence prediction, after pytorch/examples time_sequence_prediction/train.py: two
LSTMCells, trained with LBFGS, whose optimizer.step(closure) calls the closure (zero_grad,
forward, loss, backward) several times per step; after each step a prediction of the test
sequences under torch.no_grad(). The data is generated here (the example's generate_sine_wave.py).

Planted truth: the optimizer step is the step. The loop has no DataLoader and no plain forward ->
backward -> step cycle: every forward and backward of training runs inside optimizer.step().

    time_sequence_prediction.py [--steps N] [--timing-out FILE]

--timing-out FILE: at exit, this script's own measurement as JSON: perf_counter around each
training step (from the end of the previous step's prediction to the end of optimizer.step()),
and the number of times LBFGS called the closure ("closure_calls").
"""

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self, hidden=24):
        super(Sequence, self).__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def generate_sine_wave(T=20, L=60, N=12):
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype('float64')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=8, help='steps to run')
    parser.add_argument('--timing-out', metavar='FILE', help="write this script's own step timing (JSON)")
    opt = parser.parse_args()
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    # load data and make training set
    data = generate_sine_wave()
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=6)
    step_times, closure_calls = [], 0
    end = time.perf_counter()
    # begin to train
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            global closure_calls
            closure_calls += 1
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        step_times.append(time.perf_counter() - end)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = 100
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
        end = time.perf_counter()

    if opt.timing_out:
        with open(opt.timing_out, 'w') as f:
            json.dump({'pid': os.getpid(), 'steps': len(step_times), 'step_times_s': step_times,
                       'closure_calls': closure_calls}, f)
