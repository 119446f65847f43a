"""Estimates of a decoder's size next to its exact count: write-up 004's 12·L·H², its generic decoder
formula, LLaMA's SwiGLU width rule, and the exact parts that separate the estimate from the count.

Introduced in ``07_decoder_llms``. Write-up 004 writes ``d_model`` and ``N`` (layers); the series
writes ``H`` and ``L``. Error formulas are Python expressions over the symbols of
:mod:`helpers.config`, like the engine's component formulas: :func:`helpers.evaluate` gives their exact
value and :func:`helpers.render` prints them.
"""

from __future__ import annotations

from fractions import Fraction

from ..config import ModelConfig
from ..params import evaluate


def estimate_12lh2(L: int, H: int) -> int:
    """Write-up 004's estimate of a decoder's parameters, 12·L·H² (its 12·N·d_model²).

    Introduced in ``07_decoder_llms``. It is exactly Kaplan et al. 2020's N (§2.1, Table 1:
    2·d_model·n_layer·(2·d_attn + d_ff) with d_attn = d_ff/4 = d_model): the non-embedding count, which
    leaves out the vocabulary and position tables, biases and norms on purpose.
    """
    return 12 * L * H**2


def generic_decoder(L: int, H: int, V: int) -> int:
    """Write-up 004's generic decoder, L·(12H² + 13H) + V·H: GPT-2 layers with I = 4H, one V×H table.

    Introduced in ``07_decoder_llms``. It has no position table and no final LayerNorm.
    """
    return L * (12 * H**2 + 13 * H) + V * H


def swiglu_intermediate(H: int, multiple_of: int = 256, ffn_dim_multiplier: float | Fraction | None = None) -> int:
    """LLaMA's SwiGLU width: ⌊⅔·4H⌋ (times ``ffn_dim_multiplier`` if given), rounded up to a multiple of ``multiple_of``.

    The rule of ``FeedForward`` in Meta's ``llama/model.py``. Introduced in ``07_decoder_llms``.
    """
    hidden = (2 * 4 * H) // 3
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * -(-hidden // multiple_of)


# the parts of ``exact count - 12·L·H²``, in the order the notebook prints them
ERROR_PARTS = ("V·H", "P·H", "biases + norms", "feed-forward", "attention")


def error_formulas(config: ModelConfig) -> dict[str, str]:
    """``exact - 12·L·H²`` split into formulas that sum to it exactly (keys: :data:`ERROR_PARTS`).

    Introduced in ``07_decoder_llms``. ``V·H``: token table and untied head; ``P·H``: learned position
    table; ``biases + norms``: every 1-D tensor, linear-layer biases and norm weights (13·L·H + 2·H for GPT-2
    with I = 4H, write-up 004's first-order term with ``ln_f``); ``feed-forward``:
    the feed-forward matrices minus 8·H² per layer (SwiGLU's 3·H·I for LLaMA); ``attention``: the
    attention matrices minus 4·H² per layer (grouped-query attention for LLaMA 2 70B).
    """
    if config.model_type not in ("gpt2", "llama"):
        raise ValueError(f"{config.model_type} is not a decoder (gpt2, llama)")
    vocab = "V*H" if config.flags["tie_word_embeddings"] else "2*V*H"
    if config.model_type == "gpt2":
        return {"V·H": vocab, "P·H": "P*H", "biases + norms": "L*(9*H + I) + 2*H",
                "feed-forward": "L*(2*H*I - 8*H**2)", "attention": "0"}
    vectors = "(2*L + 1)*H"
    if config.flags["attention_bias"]:
        vectors += " + L*(A*d_k + 2*A_kv*d_k + H)"
    if config.flags["mlp_bias"]:
        vectors += " + L*(2*I + H)"
    return {"V·H": vocab, "P·H": "0", "biases + norms": vectors,
            "feed-forward": "L*(3*H*I - 8*H**2)", "attention": "L*(2*A*d_k*H + 2*A_kv*d_k*H - 4*H**2)"}


def error_parts(config: ModelConfig) -> dict[str, int]:
    """The exact value of each part of :func:`error_formulas` for this configuration.

    Introduced in ``07_decoder_llms``.
    """
    return {part: evaluate(formula, config) for part, formula in error_formulas(config).items()}
