"""utils.data: datasets, samplers, default_collate and DataLoader, against torch where present."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.utils import data

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")
Point = collections.namedtuple("Point", ["x", "y"])


def _modules():
    return [fg] + ([torch] if has_torch else [])


def _as_np(obj):
    """Turn a (nested) batch from either library into numpy arrays and plain containers."""
    if isinstance(obj, (fg.Tensor,)) or (has_torch and isinstance(obj, torch.Tensor)):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: _as_np(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, *(_as_np(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as_np(v) for v in obj)
    return obj


def _assert_same(a, b):
    a, b = _as_np(a), _as_np(b)
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        assert a == b


class Squares(data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.full((2,), i, dtype=np.float32), "y": i * i, "name": f"s{i}"}


class Stream(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_tensor_dataset():
    x = fg.arange(12).reshape(6, 2)
    y = fg.arange(6)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    np.testing.assert_array_equal(a.numpy(), [8, 9])
    assert b.item() == 4
    for T in _modules():
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            T.utils.data.TensorDataset(T.ones(2), T.ones(3))


@pytest.mark.parametrize(
    "samples",
    [
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        [np.float32(1.0), np.float32(2.0)],
        [np.arange(3), np.arange(3) + 1],
        [np.ones((2, 2), dtype=np.float32), np.zeros((2, 2), dtype=np.float32)],
        ["a", "b"],
        [{"a": 1, "b": 2.0}, {"a": 3, "b": 4.0}],
        [(1, 2.0), (3, 4.0)],
        [[1, 2], [3, 4]],
        [Point(1, 2.0), Point(3, 4.0)],
        [{"p": (np.ones(2), "t")}, {"p": (np.zeros(2), "u")}],
    ],
)
def test_default_collate_structure(samples):
    got = data.default_collate(samples)
    if has_torch:
        _assert_same(got, torch.utils.data.default_collate(samples))
    # each stacked leaf has the batch as leading dimension
    leaves = [got] if isinstance(got, fg.Tensor) else []
    for leaf in leaves:
        assert leaf.shape[0] == len(samples)


def test_default_collate_tensors_and_dtypes():
    out = data.default_collate([fg.ones(2, 3), fg.zeros(2, 3)])
    assert out.shape == (2, 2, 3)
    assert data.default_collate([1.0, 2.0]).dtype == fg.float64
    assert data.default_collate([1, 2]).dtype == fg.int64
    assert data.default_collate([(1, "a"), (2, "b")])[1] == ("a", "b")  # strings: the batch as given


def test_default_collate_errors():
    for T in _modules():
        with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
            T.utils.data.default_collate([[1, 2], [3]])
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
            T.utils.data.default_collate([object(), object()])


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, False), (10, True)])
def test_dataloader_unshuffled_matches_torch(batch_size, drop_last):
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    loader = data.DataLoader(
        data.TensorDataset(fg.tensor(x), fg.tensor(y)), batch_size=batch_size, drop_last=drop_last
    )
    batches = list(loader)
    assert len(loader) == len(batches)
    expected_len = 10 // batch_size if drop_last else -(-10 // batch_size)
    assert len(batches) == expected_len
    if has_torch:
        tl = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
            batch_size=batch_size,
            drop_last=drop_last,
        )
        assert len(tl) == len(loader)
        for got, exp in zip(batches, tl):
            _assert_same(got, exp)
    seen = np.concatenate([b[1].numpy() for b in batches])
    np.testing.assert_array_equal(seen, y[: len(seen)])


def test_dataloader_dict_samples_matches_torch():
    batches = list(data.DataLoader(Squares(5), batch_size=2))
    assert [b["name"] for b in batches] == [["s0", "s1"], ["s2", "s3"], ["s4"]]
    assert batches[0]["x"].shape == (2, 2) and batches[0]["x"].dtype == fg.float32
    if has_torch:
        for got, exp in zip(batches, torch.utils.data.DataLoader(Squares(5), batch_size=2)):
            _assert_same(got, exp)


def test_dataloader_shuffle_is_a_permutation_and_seeded():
    ds = data.TensorDataset(fg.arange(50))
    fg.manual_seed(3)
    first = [b[0].tolist() for b in data.DataLoader(ds, batch_size=7, shuffle=True)]
    flat = sum(first, [])
    assert sorted(flat) == list(range(50)) and flat != list(range(50))
    assert [len(b) for b in first] == [7] * 7 + [1]
    fg.manual_seed(3)
    again = [b[0].tolist() for b in data.DataLoader(ds, batch_size=7, shuffle=True)]
    assert again == first
    loader = data.DataLoader(ds, batch_size=50, shuffle=True)
    assert next(iter(loader))[0].tolist() != next(iter(loader))[0].tolist()  # a new order each epoch


def test_dataloader_generator_and_workers():
    ds = list(range(12))
    g = fg.default_generator
    g.manual_seed(7)
    a = [b.tolist() for b in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g)]
    g.manual_seed(7)
    b = [b.tolist() for b in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g, num_workers=2)]
    assert a == b
    assert sorted(sum(a, [])) == ds


def _iterator_lengths(T):
    """``len`` of a DataLoader's iterator as batches are taken, and whether it iterates itself."""
    D = T.utils.data
    it = iter(D.DataLoader(D.TensorDataset(T.arange(10)), batch_size=3))
    lengths = [len(it)]
    next(it)
    lengths.append(len(it))
    rest = len(list(it))
    unbatched = iter(D.DataLoader(list(range(7)), batch_size=None))
    return lengths, rest, iter(it) is it, len(unbatched), type(it).__name__


def test_dataloader_iterator_has_the_number_of_batches_as_len():
    ours = _iterator_lengths(fg)
    assert ours == ([4, 4], 3, True, 7, "_SingleProcessDataLoaderIter")
    if has_torch:
        assert ours == _iterator_lengths(torch)


def _iterable_loader_iterator(T, batch_size):
    """The error of ``len`` of the iterator of a loader of an IterableDataset, and its batches."""

    class Stream(T.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

        def __len__(self):  # the loader has a len; its iterator has none all the same
            return 5

    it = iter(T.utils.data.DataLoader(Stream(), batch_size=batch_size))
    with pytest.raises(TypeError) as error:
        len(it)
    return str(error.value), len(list(it))


@pytest.mark.parametrize("batch_size", [None, 2])
def test_dataloader_iterator_of_an_iterable_dataset_has_no_len(batch_size):
    ours = _iterable_loader_iterator(fg, batch_size)
    assert ours == ("object of type '_InfiniteConstantSampler' has no len()", 5 if batch_size is None else 3)
    if has_torch:
        assert ours == _iterable_loader_iterator(torch, batch_size)


def test_dataloader_no_batching_and_custom_collate():
    loader = data.DataLoader([np.ones(2), np.zeros(2)], batch_size=None)
    items = list(loader)
    assert len(loader) == 2 and isinstance(items[0], fg.Tensor) and items[0].shape == (2,)
    loader = data.DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(loader) == [1, 5, 4]


def test_dataloader_sampler_and_batch_sampler():
    ds = list(range(10))
    loader = data.DataLoader(ds, sampler=[9, 8, 7], batch_size=2)
    assert [b.tolist() for b in loader] == [[9, 8], [7]]
    loader = data.DataLoader(ds, batch_sampler=[[0, 5], [1]])
    assert [b.tolist() for b in loader] == [[0, 5], [1]]
    sub = data.SubsetRandomSampler([2, 4, 6, 8])
    assert sorted(sub) == [2, 4, 6, 8] and len(sub) == 4


def test_dataloader_iterable_dataset():
    loader = data.DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert len(data.DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in data.DataLoader(Stream(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2],
        [3, 4, 5],
    ]


@pytest.mark.parametrize(
    "kwargs,kind,message",
    [
        (
            {"batch_size": 0},
            ValueError,
            "batch_size should be a positive integer value, but got batch_size=0",
        ),
        ({"shuffle": True, "sampler": [0]}, ValueError, "sampler option is mutually exclusive with shuffle"),
        (
            {"batch_sampler": [[0]], "batch_size": 2},
            ValueError,
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
        ),
        ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
        (
            {"batch_size": None, "drop_last": True},
            ValueError,
            "batch_size=None option disables auto-batching",
        ),
    ],
)
def test_dataloader_errors(kwargs, kind, message):
    for T in _modules():
        with pytest.raises(kind, match=message):
            T.utils.data.DataLoader(list(range(3)), **kwargs)


def test_dataloader_iterable_errors():
    for T in _modules():

        class S(T.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

        with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
            T.utils.data.DataLoader(S(), shuffle=True)


def test_subset_concat_and_add():
    ds = list(range(10))
    sub = data.Subset(ds, [3, 1, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [3, 1, 4]
    cat = data.ConcatDataset([data.Subset(ds, [0, 1]), data.Subset(ds, [5, 6, 7])])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 5, 6, 7]
    assert cat[-1] == 7 and cat.cumulative_sizes == [2, 5]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-6]
    both = Squares(2) + Squares(3)
    assert isinstance(both, data.ConcatDataset) and len(both) == 5 and both[4]["y"] == 4
    chained = Stream(2) + Stream(3)
    assert list(chained) == [0, 1, 0, 1, 2]


def test_random_split():
    ds = list(range(10))
    fg.manual_seed(0)
    parts = data.random_split(ds, [3, 7])
    assert [len(p) for p in parts] == [3, 7]
    assert sorted([parts[0][i] for i in range(3)] + [parts[1][i] for i in range(7)]) == ds
    fg.manual_seed(0)
    again = data.random_split(ds, [3, 7])
    assert again[0].indices == parts[0].indices
    fracs = data.random_split(list(range(11)), [0.5, 0.3, 0.2], generator=fg.default_generator)
    sizes = [len(p) for p in fracs]
    if has_torch:
        assert sizes == [len(p) for p in torch.utils.data.random_split(list(range(11)), [0.5, 0.3, 0.2])]
    assert sum(sizes) == 11
    for T in _modules():
        with pytest.raises(
            ValueError, match="Sum of input lengths does not equal the length of the input dataset!"
        ):
            T.utils.data.random_split(range(10), [3, 3])


def test_samplers():
    assert list(data.SequentialSampler(range(4))) == [0, 1, 2, 3]
    rs = data.RandomSampler(range(6))
    assert sorted(rs) == list(range(6)) and len(rs) == 6
    rs = data.RandomSampler(range(3), replacement=True, num_samples=40)
    drawn = list(rs)
    assert len(drawn) == 40 and set(drawn) <= {0, 1, 2}
    rs = data.RandomSampler(range(4), num_samples=10)
    drawn = list(rs)
    assert len(drawn) == 10 and sorted(drawn[:4]) == [0, 1, 2, 3] and sorted(drawn[4:8]) == [0, 1, 2, 3]
    assert list(data.BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert len(data.BatchSampler(range(5), 2, True)) == 2
    for T in _modules():
        with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
            T.utils.data.BatchSampler(range(5), 2, 1)
        with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=0"):
            T.utils.data.RandomSampler(range(5), replacement=0)
        with pytest.raises(
            ValueError, match="num_samples should be a positive integer value, but got num_samples=0"
        ):
            T.utils.data.RandomSampler(range(5), num_samples=0)


def test_training_loop_with_loader():
    fg.manual_seed(0)
    x = fg.randn(64, 3)
    w = fg.tensor([[1.0], [-2.0], [0.5]])
    y = x @ w
    model = fg.nn.Linear(3, 1)
    opt = fg.optim.SGD(model.parameters(), lr=0.1)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True)
    for _ in range(30):
        for xb, yb in loader:
            opt.zero_grad()
            loss = fg.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
    assert loss.item() < 1e-3
