"""DistributedSampler: the replicas' shares cover the dataset once (padded or cut to equal
shares), in torch's order without shuffling; shuffled orders depend on seed and epoch only.
ferrograd.distributed, which has no process groups, raises torch's errors; nn.DataParallel runs
its module on the whole batch, as torch's does without CUDA."""

import pytest

import ferrograd as fg
from ferrograd.utils.data import DataLoader, DistributedSampler, TensorDataset

from helpers import has_torch


@pytest.mark.parametrize("size", [1, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 2, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_shares_cover_the_dataset(size, replicas, drop_last):
    shares = [
        list(DistributedSampler(range(size), replicas, rank, shuffle=False, drop_last=drop_last))
        for rank in range(replicas)
    ]
    lengths = {len(share) for share in shares}
    assert len(lengths) == 1
    seen = sorted(i for share in shares for i in share)
    if drop_last:
        assert len(seen) == len(set(seen)) == replicas * (size // replicas)
    else:
        assert set(seen) == set(range(size)) and len(seen) == replicas * -(-size // replicas)
    if has_torch:
        import torch.utils.data as torch_data

        for rank in range(replicas):
            reference = torch_data.DistributedSampler(
                range(size), replicas, rank, shuffle=False, drop_last=drop_last
            )
            assert shares[rank] == list(reference) and len(reference) == len(shares[rank])


def test_shuffled_order_follows_seed_and_epoch():
    def order(seed, epoch):
        samplers = [DistributedSampler(range(20), 2, rank, seed=seed) for rank in range(2)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = order(0, 0)
    assert sorted(first[0] + first[1]) == list(range(20)) and first == order(0, 0)
    assert first != order(0, 1) and first != order(1, 0)


def test_with_a_dataloader_and_errors():
    loader = DataLoader(
        TensorDataset(fg.arange(10.0)),
        batch_size=2,
        sampler=DistributedSampler(range(10), 2, 1, shuffle=False),
    )
    assert [batch[0].tolist() for batch in loader] == [[1.0, 3.0], [5.0, 7.0], [9.0]]
    with pytest.raises(ValueError, match="Invalid rank 3, rank should be in the interval \\[0, 2\\]"):
        DistributedSampler(range(10), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(10))
    assert not fg.distributed.is_available() and not fg.distributed.is_initialized()
    with pytest.raises(RuntimeError, match="one process"):
        fg.distributed.init_process_group("gloo")


def test_data_parallel_runs_the_module_on_the_whole_batch():
    fg.manual_seed(0)
    inner = fg.nn.Linear(2, 3)
    model = fg.nn.DataParallel(inner)
    x = fg.randn(4, 2)
    assert model(x).tolist() == inner(x).tolist() and model.module is inner and model.device_ids == []
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    model(x).sum().backward()
    assert inner.weight.grad is not None
    if has_torch:
        import torch

        reference = torch.nn.DataParallel(torch.nn.Linear(2, 3))
        assert repr(model) == repr(reference) and list(model.state_dict()) == list(reference.state_dict())
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        fg.nn.parallel.DistributedDataParallel(inner)
