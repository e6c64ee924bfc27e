"""A word-language-model training loop written like PyTorch's examples/word_language_model/main.py:
batches are sliced from one tensor of token ids (batchify, get_batch), no DataLoader; an LSTM,
clip_grad_norm_, and the example's manual SGD update `p.data.add_(p.grad, alpha=-lr)` (or
torch.optim.SGD with --optimizer sgd); evaluate() on validation data under torch.no_grad(), and
torch.save of the model after each epoch.

The planted truth: --data-ms of sleep in get_batch (slow batch preparation). The script times its
own loop with time.perf_counter() and prints, as its last line, JSON: the number of training
batches, each iteration's time, each get_batch's time (training only), and the time between the
end of each update (backward and its manual update, or optimizer.step) and the next forward,
without optimizer.zero_grad."""

import argparse
import json
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser(description="word-language-model-style LSTM")
parser.add_argument("--batches", type=int, default=16, help="training batches per epoch")
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--bptt", type=int, default=8)
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--data-ms", type=float, default=15, help="planted: sleep in get_batch")
parser.add_argument("--optimizer", choices=["manual", "sgd"], default="manual")
parser.add_argument("--save", default=os.path.join(tempfile.gettempdir(), "word_lm_%d.pt" % os.getpid()))
args = parser.parse_args()

torch.manual_seed(1111)
ntokens = 50


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(output).view(-1, ntokens)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


corpus_train = torch.randint(ntokens, (args.batches * args.bptt * args.batch_size + args.batch_size,))
corpus_valid = torch.randint(ntokens, (4 * args.bptt * 4 + 4,))
train_data = batchify(corpus_train, args.batch_size)
val_data = batchify(corpus_valid, 4)

model = RNNModel(ntokens, 16, 32, 1)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr) if args.optimizer == "sgd" else None

get_batch_times = []


def get_batch(source, i, timed=False):
    t0 = time.perf_counter()
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    time.sleep(args.data_ms / 1000.0)  # planted: slow batch preparation
    if timed:
        get_batch_times.append(time.perf_counter() - t0)
    return data, target


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def evaluate(data_source, eval_batch_size=4):
    """Mean loss per token over data_source (the example's evaluate(), dropout off)."""
    model.eval()
    hidden = model.init_hidden(eval_batch_size)
    losses = []
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            losses.append(len(data) * criterion(output, targets).item())
    return sum(losses) / (len(data_source) - 1)


step_times = []
between_times = []


def train():
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(args.batch_size)
    last_update = None
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        t0 = time.perf_counter()
        data, targets = get_batch(train_data, i, timed=True)
        hidden = repackage_hidden(hidden)
        t_zero = time.perf_counter()
        if optimizer is not None:
            optimizer.zero_grad()
        else:
            model.zero_grad()
        t_forward = time.perf_counter()
        if last_update is not None:
            zero_grad = t_forward - t_zero if optimizer is not None else 0.0
            between_times.append(t_forward - last_update - zero_grad)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        last_update = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        if optimizer is not None:
            optimizer.step()
            last_update = time.perf_counter()
        else:
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-args.lr)
        total_loss += loss.item()
        step_times.append(time.perf_counter() - t0)


for epoch in range(1, args.epochs + 1):
    train()
    val_loss = evaluate(val_data)
    with open(args.save, "wb") as f:
        torch.save(model, f)
os.unlink(args.save)
print(json.dumps({"batches": len(step_times), "step_times": step_times, "get_batch_times": get_batch_times,
                  "between_times": between_times}))
