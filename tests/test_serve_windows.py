"""A window layer's reservation at a short context (notebook 12's slide "The general formula" and exercise 12.5).

vLLM reserves ``⌈min(W − 1 + max_num_batched_tokens, S) / block_size⌉ + 1`` blocks of a sliding-window layer for one
sequence: below ``W − 1 + max_num_batched_tokens`` tokens the window saves nothing, a smaller prefill chunk lets it.
"""

from __future__ import annotations

from helpers import load_config
from helpers.serve import serve


def test_a_window_saves_nothing_while_the_prefill_chunk_covers_the_context():
    oss = load_config("gpt-oss-120b")
    short = serve(oss, "H100-SXM", 1, max_model_len=8192)  # batched 8,192 by default: min(127 + 8,192, 8,192) = S
    assert short.cache.groups() == (18, {"full": 1, "sliding": 1})
    assert short.blocks_per_sequence == 512 + (512 + 1) and short.max_sequences == 15
    every_layer_full = short.available // (short.block_size * 36 * 2 * 8 * 64 * 2) // 512
    assert every_layer_full == short.max_sequences  # the windows change nothing at this length
    chunked = serve(oss, "H100-SXM", 1, max_model_len=8192, batched=2048)
    assert chunked.blocks_per_sequence == 512 + (-(-(127 + 2048) // 16) + 1) == 512 + 137
    assert chunked.max_sequences == chunked.num_blocks // chunked.blocks_per_sequence == 23
    long = serve(oss, "H100-SXM", 1, max_model_len=131_072)
    assert long.blocks_per_sequence == 8192 + 521 and long.max_sequences == 1
