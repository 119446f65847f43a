"""The Transformer of Vaswani et al. 2017 ("Attention Is All You Need"), counted from its Table 3.

Introduced in ``09_modern_architectures``. The 2017 model is no transformers ``model_type`` (so no family of
:mod:`helpers.families`): its tensors are built here, as a :class:`~helpers.params.Layout` like every family's,
from the sizes Table 3 prints (N layers per stack, d_model, d_ff, h heads; in the series' symbols L = L_d = N,
H = d_model, I = d_ff, A = h, d_k = d_model / h) and from :class:`Assumptions` for what the paper leaves open:

* the vocabulary V: §5.1 gives "about 37000" byte-pair tokens shared by source and target for English-German
  (the language pair of Table 3) and 32000 word pieces for English-French;
* biases: eq. 2 writes the feed-forward with b₁ and b₂; §3.2.2 writes W^Q, W^K, W^V and W^O without any;
* the norms: each sublayer ends in LayerNorm(x + Sublayer(x)) (§3.1, Ba et al. 2016: γ and β), and no extra
  norm closes a stack;
* what the paper fixes: the two embedding tables and the pre-softmax projection are one matrix (§3.4), and the
  sinusoidal positions (§3.5) are computed, not learned: V·H once, no position table.

Names and order are those of ``torch.nn.Transformer`` behind one ``nn.Embedding`` (:func:`torch_transformer_2017`),
so the torch check compares them tensor by tensor. ``nn.Transformer`` differs from the paper in two ways the
assumptions express: biases on every attention projection (``in_proj_bias``, ``out_proj.bias``) and a final
LayerNorm on each stack (``encoder.norm``, ``decoder.norm``); it also packs W_Q, W_K, W_V into one
``in_proj_weight`` of 3H × H, which changes no count.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Any, Mapping

from ..config import ModelConfig, published
from ..params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout, Param


@dataclass(frozen=True)
class Assumptions:
    """What a count of the 2017 Transformer assumes where the paper is silent (the defaults follow its text).

    ``V``: the shared vocabulary (§5.1: about 37000 for English-German, Table 3's pair); ``attention_bias``:
    biases on W^Q, W^K, W^V, W^O (§3.2.2 writes none); ``ffn_bias``: b₁ and b₂ of eq. 2 (written);
    ``final_norms``: one more LayerNorm closing each stack (not in the paper's post-LN layers, added by
    ``torch.nn.Transformer``); ``output_bias``: a bias of V on the pre-softmax projection (not written).
    Introduced in ``09_modern_architectures``.
    """

    V: int = 37000
    attention_bias: bool = False
    ffn_bias: bool = True
    final_norms: bool = False
    output_bias: bool = False


def table_3() -> list[dict[str, Any]]:
    """The base and big rows of Vaswani et al. 2017's Table 3, as ``data/published.json`` holds them.

    Introduced in ``09_modern_architectures``.
    """
    return list(published()["vaswani_2017"]["rows"])


def paper_config(row: Mapping[str, Any], V: int) -> ModelConfig:
    """A Table 3 row in the series' symbols (L = L_d = N, H = d_model, I = d_ff, A = h, d_k) with a vocabulary V.

    Introduced in ``09_modern_architectures``. For :func:`helpers.params.evaluate` and :func:`helpers.params.render`;
    the model has no family, so the engine's family-based functions do not apply to it.
    """
    sizes = {"V": V, "H": row["d_model"], "L": row["N"], "L_d": row["N"], "A": row["h"], "I": row["d_ff"],
             "d_k": row["d_k"]}
    return ModelConfig(name=f"transformer-{row['model']}", model_type="transformer-2017", sizes=sizes, flags={})


def _attention(name: str, H: int, bias: bool) -> list[Param]:
    params = [Param.matrix(f"{name}.in_proj_weight", (3 * H, H), ATTENTION, "3*H**2")]
    if bias:
        params.append(Param.bias(f"{name}.in_proj_bias", (3 * H,), ATTENTION, "3*H"))
    params.append(Param.matrix(f"{name}.out_proj.weight", (H, H), ATTENTION, "H**2"))
    if bias:
        params.append(Param.bias(f"{name}.out_proj.bias", (H,), ATTENTION, "H"))
    return params


def _layer(H: int, I: int, a: Assumptions, decoder: bool) -> list[Param]:
    """One layer as ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer`` registers it."""
    params = _attention("self_attn", H, a.attention_bias)
    if decoder:
        params += _attention("multihead_attn", H, a.attention_bias)  # the cross-attention over the encoder's output
    params.append(Param.matrix("linear1.weight", (I, H), FEED_FORWARD, "I*H"))
    if a.ffn_bias:
        params.append(Param.bias("linear1.bias", (I,), FEED_FORWARD, "I"))
    params.append(Param.matrix("linear2.weight", (H, I), FEED_FORWARD, "H*I"))
    if a.ffn_bias:
        params.append(Param.bias("linear2.bias", (H,), FEED_FORWARD, "H"))
    for k in range(1, 4 if decoder else 3):
        params += [Param.norm(f"norm{k}.weight", (H,), LAYER_NORM, "H"),
                   Param.norm(f"norm{k}.bias", (H,), LAYER_NORM, "H")]
    return params


def transformer_2017(row: Mapping[str, Any], assumptions: Assumptions = Assumptions()) -> Layout:
    """The 2017 Transformer of a Table 3 row under ``assumptions``: its tensors, as ``nn.Transformer`` names them.

    Introduced in ``09_modern_architectures``. ``embedding.weight`` (V × H) is the source table, the target table
    and the pre-softmax projection at once (§3.4: listed once, multiplying every token as the output layer); then
    N encoder layers, [``encoder.norm``], N decoder layers, [``decoder.norm``], [``output_bias``].
    """
    H, I, N, a = row["d_model"], row["d_ff"], row["N"], assumptions
    blocks = [Block.once(Param.table("embedding.weight", (a.V, H), EMBEDDINGS, "V*H", tokens="B*S"))]
    for stack in ("encoder", "decoder"):
        blocks.append(Block.stack(f"transformer.{stack}.layers.{{i}}.", _layer(H, I, a, stack == "decoder"), N))
        if a.final_norms:
            blocks.append(Block.once(Param.norm(f"transformer.{stack}.norm.weight", (H,), LAYER_NORM, "H"),
                                     Param.norm(f"transformer.{stack}.norm.bias", (H,), LAYER_NORM, "H")))
    if a.output_bias:
        blocks.append(Block.once(Param.bias("output_bias", (a.V,), LM_HEAD, "V")))
    return Layout(tuple(blocks))


def formulas_2017(assumptions: Assumptions = Assumptions()) -> dict[str, str]:
    """The parameters of each component of the 2017 Transformer as formulas over V, H, I, L, L_d (L_d = L = N).

    Introduced in ``09_modern_architectures``. Each encoder layer has one attention, each decoder layer two
    (masked self-attention and cross-attention): L + 2L_d attentions, L + L_d feed-forwards, 2L + 3L_d LayerNorms.
    """
    a = assumptions
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: "(L + 2*L_d)*(4*H**2 + 4*H)" if a.attention_bias else "(L + 2*L_d)*4*H**2",
        FEED_FORWARD: "(L + L_d)*(2*H*I + I + H)" if a.ffn_bias else "(L + L_d)*2*H*I",
        LAYER_NORM: "(2*L + 3*L_d)*2*H + 4*H" if a.final_norms else "(2*L + 3*L_d)*2*H",
    }
    if a.output_bias:
        result[LM_HEAD] = "V"
    return result


def vocabulary_range(row: Mapping[str, Any], assumptions: Assumptions = Assumptions()) -> range:
    """The vocabularies V for which the count rounds to the row's stated figure (to the nearest million).

    Introduced in ``09_modern_architectures``. The count is ``rest + V·H`` (V appears in the shared table only,
    and in an output bias when assumed); the figure ``value`` covers counts in [value − ½M, value + ½M). An empty
    range: no vocabulary gives the figure under these assumptions.
    """
    per_token = row["d_model"] + (1 if assumptions.output_bias else 0)
    rest = transformer_2017(row, Assumptions(**{**vars(assumptions), "V": 0})).total
    low, high = row["value"] - 500_000, row["value"] + 500_000  # the count lies in [low, high)
    return range(max(ceil(Fraction(low - rest, per_token)), 0), ceil(Fraction(high - rest, per_token)))


def nn_transformer_assumptions(V: int) -> Assumptions:
    """The assumptions under which :func:`transformer_2017` is exactly ``torch.nn.Transformer`` + ``nn.Embedding``.

    Introduced in ``09_modern_architectures``. Biases everywhere (``bias=True``, its default) and a final
    LayerNorm on each stack (which ``nn.Transformer`` always adds).
    """
    return Assumptions(V=V, attention_bias=True, ffn_bias=True, final_norms=True, output_bias=False)


def torch_transformer_2017(row: Mapping[str, Any], V: int, device: str = "meta") -> Any:
    """``nn.Embedding(V, d_model)`` (the shared table) and ``torch.nn.Transformer`` of a Table 3 row, in one module.

    Introduced in ``09_modern_architectures``. Built on the meta device (shapes, no memory); its parameters are
    those of ``transformer_2017(row, nn_transformer_assumptions(V))``, names and order included.
    """
    import torch
    from torch import nn

    class Transformer2017(nn.Module):
        """The shared embedding table, then ``nn.Transformer`` (post-LN layers, as the paper's)."""

        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(V, row["d_model"])
            self.transformer = nn.Transformer(d_model=row["d_model"], nhead=row["h"], num_encoder_layers=row["N"],
                                              num_decoder_layers=row["N"], dim_feedforward=row["d_ff"],
                                              batch_first=True)

    with torch.device(device):
        return Transformer2017()
