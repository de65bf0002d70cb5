"""A tiny llama-architecture GGUF model with random weights, written locally.

Nothing can be downloaded from a model hub here, and nothing needs to be: a real
inference server needs a valid model file, not a good one. The vocabulary is
SentencePiece-style with byte fallback (every byte is a token) plus a few hundred
common pieces, so any text tokenizes and the server's token counts are its own, unlike
anything nerfwatch assumes. Weights come from a seeded generator: the same seed gives the
same file, so a server answers the same prompt the same way at temperature 0.
"""

from __future__ import annotations

import string
from pathlib import Path

import gguf
import numpy as np

__all__ = ["write_tiny_model"]

N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 8192

_SPECIAL = ["<unk>", "<s>", "</s>"]
_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "at",
    "this",
    "are",
    "from",
    "or",
    "an",
    "not",
    "key",
    "value",
    "answer",
    "number",
    "list",
    "return",
    "only",
    "sort",
    "count",
    "json",
    "name",
    "item",
    "token",
    "model",
    "user",
    "system",
    "assistant",
    "question",
    "what",
    "which",
    "first",
    "last",
    "after",
    "before",
]


def _vocab() -> tuple[list[str], list[float], list[int]]:
    tokens = list(_SPECIAL)
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    pieces = ["▁" + w for w in _WORDS] + list(string.ascii_letters + string.digits)
    pieces += ["▁" + c for c in string.ascii_lowercase + string.digits]
    pieces += list("{}[]:,.\"'-_=()?!")
    seen = set(tokens)
    for piece in pieces:
        if piece not in seen:
            seen.add(piece)
            tokens.append(piece)
            types.append(gguf.TokenType.NORMAL)
    # Longer pieces score higher, so the merge prefers whole words over letters.
    scores = [0.0] * (len(_SPECIAL) + 256) + [
        float(len(t)) - 10.0 for t in tokens[len(_SPECIAL) + 256 :]
    ]
    return tokens, scores, [int(t) for t in types]


def write_tiny_model(path: Path, *, seed: int = 0) -> Path:
    """Write the model to ``path`` (f32 weights, about 1 MB) and return it."""
    tokens, scores, types = _vocab()
    rng = np.random.default_rng(seed)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("nerfwatch-tiny-random")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    vocab = len(tokens)
    writer.add_tensor("token_embd.weight", weight(vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    writer.add_tensor("output.weight", weight(vocab, N_EMBD))
    for i in range(N_LAYER):
        block = f"blk.{i}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(N_EMBD, N_FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
