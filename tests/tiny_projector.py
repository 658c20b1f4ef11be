"""A multimodal projector (``mmproj``) small enough to write in a test: a LLaVA-style CLIP vision tower
(one layer, 28-pixel images in 14-pixel patches, so four image tokens) and its two-layer MLP into the
packaged model's 576-wide embeddings, with seeded random weights, written with ``gguf`` (llama.cpp's own
writer). Its answers mean nothing; what it proves is the path: pull, load, image to embeddings in the
model's context, decode."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import gguf
import numpy as np

__all__ = ["IMAGE_TOKENS", "png", "write_projector"]

_IMAGE, _PATCH, _HIDDEN, _FF = 28, 14, 32, 64
IMAGE_TOKENS = (_IMAGE // _PATCH) ** 2
"""What one image becomes in the model's context (LLaVA drops the class embedding)."""


def write_projector(path: Path, text_width: int = 576) -> Path:
    writer = gguf.GGUFWriter(str(path), "clip")
    writer.add_name("tiny-test-projector")
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_bool("clip.has_llava_projector", True)
    writer.add_string("clip.projector_type", "mlp")
    writer.add_file_type(0)
    for key, value in (("image_size", _IMAGE), ("patch_size", _PATCH), ("embedding_length", _HIDDEN),
                       ("feed_forward_length", _FF), ("projection_dim", text_width),
                       ("attention.head_count", 2), ("block_count", 1)):  # fmt: skip
        writer.add_uint32(f"clip.vision.{key}", value)
    writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-5)
    writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    writer.add_bool("clip.use_gelu", True)
    rng = np.random.default_rng(0)

    def random(name: str, *shape: int) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    def norm(name: str) -> None:
        writer.add_tensor(f"{name}.weight", np.ones(_HIDDEN, np.float32))
        writer.add_tensor(f"{name}.bias", np.zeros(_HIDDEN, np.float32))

    random("v.patch_embd.weight", _HIDDEN, 3, _PATCH, _PATCH)
    random("v.class_embd", _HIDDEN)
    random("v.position_embd.weight", IMAGE_TOKENS + 1, _HIDDEN)
    norm("v.pre_ln")
    for part in ("attn_q", "attn_k", "attn_v", "attn_out"):
        random(f"v.blk.0.{part}.weight", _HIDDEN, _HIDDEN)
        random(f"v.blk.0.{part}.bias", _HIDDEN)
    norm("v.blk.0.ln1")
    norm("v.blk.0.ln2")
    random("v.blk.0.ffn_up.weight", _FF, _HIDDEN)
    random("v.blk.0.ffn_up.bias", _FF)
    random("v.blk.0.ffn_down.weight", _HIDDEN, _FF)
    random("v.blk.0.ffn_down.bias", _HIDDEN)
    random("mm.0.weight", text_width, _HIDDEN)
    random("mm.0.bias", text_width)
    random("mm.2.weight", text_width, text_width)
    random("mm.2.bias", text_width)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A one-colour PNG (mtmd decodes it with stb_image)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
