"""The other classes of a family (``--class``): the base model alone, or another head on it, built once for all.

No notebook uses it yet (``05_pooler_and_heads`` counts BERT's heads through :func:`helpers.params.pretraining_heads`
and :func:`helpers.params.classification_head`, which read them from here). A family lists its classes in its
``classes`` field, each a :class:`~helpers.families.base.ModelClass` made by :func:`model_class` from the family's
own layout:

* a head is a function of the config giving its tensors in the order transformers registers them, its parameter
  formula per component and its tied tensors (:class:`HeadParts`); :func:`linear`, :func:`layer_norm`,
  :func:`own_bias` and :func:`decoder` are the parts, :func:`combine` joins them;
* :func:`model_class` puts a head on the family's layout: under the attribute transformers gives the base model
  (``bert.``, ``model.``, ``transformer.``), with or without the pooler or the LM head, the head after the base
  model or before it (XLM-RoBERTa registers its heads first, so the tied token table is listed under the head's
  name), then the tied tensors resolved as ``named_parameters()`` does: a tensor tied to another is listed once,
  where it first occurs, and only when ``tie_word_embeddings`` is true (transformers ties nothing otherwise);
* :func:`decoder_classes` and :func:`encoder_classes` give the classes a decoder or an encoder family has
  (``XModel``, ``XForSequenceClassification`` ...), so a family lists them in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..spec import Flag, ModelConfig
from ..spec import (
    CLASSIFIER, EMBEDDINGS, LM_HEAD, MLM_HEAD, POOLER, QA_HEAD, TABLE, Block, Layout, Param, evaluate,
)
from .base import ModelClass

# an MLM head's decoder reuses the token table unless the file unties it (every encoder's default: true)
TIED = (Flag("tie_word_embeddings", True),)


@dataclass(frozen=True)
class HeadParts:
    """A head's tensors (in transformers' registration order), its formula per component, its tied tensors.

    ``ties`` maps a tensor of the head to the one it shares (``cls.predictions.decoder.weight`` → the token table,
    named relative to the base model), as the class's ``_tied_weights_keys``; applied only when tied.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    params: list[Param]
    formulas: dict[str, str]
    ties: dict[str, str] = field(default_factory=dict)


Head = Callable[[ModelConfig], HeadParts]


def _on(bias: bool | str, c: ModelConfig) -> bool:
    """Whether a part has its bias: ``bias`` itself, or the value of the flag it names (ModernBERT's ``norm_bias``)."""
    return c.flags[bias] if isinstance(bias, str) else bias


def _product(out: str, width: str) -> str:
    """The formula of an ``out × width`` weight: ``H**2``, ``2*H``, ``H`` (one output) ..."""
    if out == width:
        return f"{out}**2"
    return width if out == "1" else f"{out}*{width}"


def linear(name: str, out: str, component: str, tokens: str = "B*S", width: str = "H",
           bias: bool | str = True) -> Head:
    """An ``nn.Linear(width, out)`` called ``name`` (``out``, ``width``: symbols or numbers, ``"C"``, ``"2"``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``tokens``: what it multiplies (``"B"``: the [CLS] or last token of each sequence); ``bias``: whether it has
    one, or the flag that says so (ModernBERT's ``classifier_bias``).
    """

    def parts(c: ModelConfig) -> HeadParts:
        rows, cols = evaluate(out, c), evaluate(width, c)
        params = [Param.matrix(f"{name}.weight", (rows, cols), component, _product(out, width), tokens=tokens)]
        formula = _product(out, width)
        if _on(bias, c):
            params.append(Param.bias(f"{name}.bias", (rows,), component, out))
            formula += f" + {out}"
        return HeadParts(params, {component: formula})

    return parts


def layer_norm(name: str, component: str, width: str = "H", bias: bool | str = True) -> Head:
    """An ``nn.LayerNorm(width)`` called ``name``: γ and β (γ alone without ``bias``, or where the flag it names is
    off: ModernBERT's ``norm_bias``).
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    def parts(c: ModelConfig) -> HeadParts:
        n = evaluate(width, c)
        if not _on(bias, c):
            return HeadParts([Param.norm(f"{name}.weight", (n,), component, width)], {component: width})
        return HeadParts([Param.norm(f"{name}.weight", (n,), component, width),
                          Param.norm(f"{name}.bias", (n,), component, width)], {component: f"2*{width}"})

    return parts


def own_bias(name: str, component: str = MLM_HEAD) -> Head:
    """The V-wide output bias an MLM head registers itself (``cls.predictions.bias``).
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    def parts(c: ModelConfig) -> HeadParts:
        return HeadParts([Param.bias(name, (c["V"],), component, "V")], {component: "V"})

    return parts


def decoder(name: str, table: str, width: str = "H", bias_tied_to: str | None = None,
            bias: bool | str = True) -> Head:
    """An MLM head's ``nn.Linear(width, V)`` whose weight is the token table ``table`` when tied.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    Tied, its weight is the table (counted there) and its bias is ``bias_tied_to``
    (BERT, RoBERTa, ALBERT: the head's own bias) or its own (ELECTRA, DistilBERT); untied (``tie_word_embeddings:
    false``), transformers ties nothing: a V × width weight and a V bias of its own, beside ``bias_tied_to``.
    ``bias``: whether the decoder has a bias of its own, or the flag that says so (ModernBERT's ``decoder_bias``).
    """

    def parts(c: ModelConfig) -> HeadParts:
        V, W = c["V"], evaluate(width, c)
        tied = c.flags["tie_word_embeddings"]
        if tied:  # listed here, then resolved against the table: once, where it first occurs
            weight = Param.table(f"{name}.weight", (V, W), EMBEDDINGS, f"V*{width}", tokens="B*S")
        else:
            weight = Param.matrix(f"{name}.weight", (V, W), MLM_HEAD, f"V*{width}")
        own = _on(bias, c)
        params = [weight, Param.bias(f"{name}.bias", (V,), MLM_HEAD, "V")] if own else [weight]
        if not tied:
            return HeadParts(params, {MLM_HEAD: f"V*{width} + V" if own else f"V*{width}"})
        ties = {f"{name}.weight": table}
        if not own:
            return HeadParts(params, {}, ties)
        if bias_tied_to is not None:
            ties[f"{name}.bias"] = bias_tied_to
            return HeadParts(params, {}, ties)
        return HeadParts(params, {MLM_HEAD: "V"}, ties)

    return parts


def combine(*heads: Head) -> Head:
    """Several heads (or parts) as one, in order: their tensors, formulas and ties.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    def parts(c: ModelConfig) -> HeadParts:
        params: list[Param] = []
        formulas: dict[str, str] = {}
        ties: dict[str, str] = {}
        for head in heads:
            one = head(c)
            params += one.params
            ties.update(one.ties)
            for component, formula in one.formulas.items():
                formulas[component] = f"{formulas[component]} + {formula}" if component in formulas else formula
        return HeadParts(params, formulas, ties)

    return parts


# --- operations on a layout ---------------------------------------------------------------------------------

def _names(block: Block) -> list[str]:
    """Each tensor's whole name (a stack: under its prefix, layer index left as ``{i}``)."""
    return [block.prefix + p.name for p in block.params]


def _rebased(layout: Layout, old: str, new: str) -> Layout:
    """Every name under ``new`` instead of ``old`` (``"model."`` → ``""``: the base model alone)."""
    blocks = []
    for block in layout.blocks:
        if block.layers is not None:
            assert block.prefix.startswith(old), (block.prefix, old)
            blocks.append(replace(block, prefix=new + block.prefix[len(old):]))
        else:
            assert all(p.name.startswith(old) for p in block.params), (old, _names(block))
            blocks.append(replace(block, params=tuple(replace(p, name=new + p.name[len(old):]) for p in block.params)))
    return Layout(tuple(blocks))


def _without(layout: Layout, drop: Callable[[Param], bool]) -> Layout:
    """The layout less the tensors ``drop`` picks (blocks left empty are removed)."""
    blocks = (replace(b, params=tuple(p for p in b.params if not drop(p))) for b in layout.blocks)
    return Layout(tuple(b for b in blocks if b.params))


def _untied(layout: Layout) -> Layout:
    """No LM head: the token table is a lookup only (no matmul)."""
    return Layout(tuple(replace(b, params=tuple(replace(p, tokens="") if p.kind == TABLE else p for p in b.params))
                        for b in layout.blocks))


def _tied(layout: Layout, ties: Mapping[str, str]) -> Layout:
    """Each pair of tied tensors listed once, where the first of the two occurs (``named_parameters()``).

    The one kept takes the other's ``tokens`` if it has none (the token table, now also the LM head's matmul).
    """
    once = [(i, j) for i, b in enumerate(layout.blocks) if b.layers is None for j in range(len(b.params))]
    where = {layout.blocks[i].params[j].name: (i, j) for i, j in once}
    params = [list(b.params) for b in layout.blocks]
    dropped = set()
    for target, source in ties.items():
        first, second = sorted((where[target], where[source]))
        kept, other = params[first[0]][first[1]], params[second[0]][second[1]]
        assert kept.shape == other.shape, (target, source)
        params[first[0]][first[1]] = replace(kept, tokens=kept.tokens or other.tokens)
        dropped.add(second)
    blocks = (replace(b, params=tuple(p for j, p in enumerate(params[i]) if (i, j) not in dropped))
              for i, b in enumerate(layout.blocks))
    return Layout(tuple(b for b in blocks if b.params))


def model_class(head: Head | None = None, *, prefix: tuple[str, str] = ("", ""), pooler: bool = True,
                lm_head: bool = True, head_first: bool = False, base: ModelClass | None = None, labels: bool = False,
                required_labels: int | None = None, flags: tuple[Flag, ...] = (),
                refused: Mapping[str, tuple[Any, str]] | None = None,
                read: Callable[[Mapping[str, Any]], None] | None = None) -> ModelClass:
    """A class of a family: its layout (or ``base``'s) with ``head`` on it, as transformers builds that class.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``prefix`` = (old, new): the base model's tensors move from ``old`` to ``new``
    (``("", "bert.")``: BertModel inside BertForMaskedLM; ``("model.", "")``: LlamaModel out of
    LlamaForCausalLM). ``pooler=False`` drops the pooler (``add_pooling_layer=False``); ``lm_head=False`` drops
    an untied ``lm_head.weight`` and the tied table's matmul (the base model has no head). ``head_first``: the
    class registers its head before the base model. ``labels``, ``required_labels``, ``flags``, ``refused``,
    ``read``: as :class:`~helpers.families.base.ModelClass`.
    """
    old, new = prefix

    def layout(c: ModelConfig) -> Layout:
        whole = base.layout(c) if base is not None else c.family.layout(c)
        if not pooler:
            whole = _without(whole, lambda p: p.component == POOLER)
        if not lm_head:  # every causal LM of transformers names its head lm_head, beside the base model
            whole = _untied(_without(whole, lambda p: p.name == "lm_head.weight"))
        whole = _rebased(whole, old, new)
        if head is None:
            return whole
        parts = head(c)
        block = Block.once(*parts.params)
        whole = Layout((block, *whole.blocks) if head_first else (*whole.blocks, block))
        if parts.ties and c.flags["tie_word_embeddings"]:
            mine = {p.name for p in parts.params}
            whole = _tied(whole, {t: s if s in mine else new + s for t, s in parts.ties.items()})
        return whole

    def formulas(c: ModelConfig) -> dict[str, str]:
        result = dict(base.formulas(c) if base is not None else c.family.formulas(c))
        if not pooler:
            result.pop(POOLER, None)
        if not lm_head:
            result.pop(LM_HEAD, None)
        if head is not None:
            for component, formula in head(c).formulas.items():
                result[component] = f"{result[component]} + {formula}" if component in result else formula
        return result

    return ModelClass(layout, formulas, labels, required_labels, flags, dict(refused or {}), read)


def decoder_classes(stem: str, prefix: str, *, token_head: str | None = "score", qa_prefix: str | None = None,
                    width: str = "H", base: ModelClass | None = None) -> dict[str, ModelClass]:
    """A decoder family's other classes: ``{stem}Model``, ``{stem}ForSequenceClassification`` and, where
    transformers has them, ``{stem}ForTokenClassification`` and ``{stem}ForQuestionAnswering``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``prefix``: the base model's attribute in the causal LM (``"model."``);
    ``token_head``: the token classifier's name (``score``, with a bias, in transformers' generic class; GPT-2 and
    GPT-NeoX: ``classifier``), None where there is none; ``qa_prefix``: the base model's attribute in the
    question-answering class (``"transformer."`` in LLaMA's, kept for old checkpoints), None where there is none;
    ``width``: the heads' input width (OPT: its ``word_embed_proj_dim`` E); ``base``: the base model without its
    head where dropping ``lm_head.weight`` is not the whole story (OPT's ``project_out`` stays).
    The sequence classifier ``score`` has no bias and reads every token (its logits at the last one are kept).
    """
    strip = base is None  # with a base of the family's own, nothing more to drop
    classes = {
        f"{stem}Model": model_class(prefix=(prefix, ""), lm_head=not strip, base=base),
        f"{stem}ForSequenceClassification": model_class(linear("score", "C", CLASSIFIER, width=width, bias=False),
                                                        prefix=(prefix, prefix), lm_head=not strip, base=base,
                                                        labels=True),
    }
    if token_head is not None:
        classes[f"{stem}ForTokenClassification"] = model_class(linear(token_head, "C", CLASSIFIER, width=width),
                                                               prefix=(prefix, prefix), lm_head=not strip, base=base,
                                                               labels=True)
    if qa_prefix is not None:
        classes[f"{stem}ForQuestionAnswering"] = model_class(linear("qa_outputs", "2", QA_HEAD, width=width),
                                                             prefix=(prefix, qa_prefix), lm_head=not strip, base=base)
    return classes


def encoder_classes(stem: str, prefix: str, *, mlm: Head, has_pooler: bool = True, head_first: bool = False,
                    sequence_head: Head | None = None, choice_head: Head | None = None,
                    extra: Mapping[str, ModelClass] | None = None) -> dict[str, ModelClass]:
    """An encoder family's other classes: ``{stem}ForMaskedLM``, ``{stem}ForSequenceClassification``,
    ``{stem}ForTokenClassification``, ``{stem}ForQuestionAnswering``, ``{stem}ForMultipleChoice``, then ``extra``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``prefix``: the base model's attribute (``"bert."``); ``mlm``: the masked-LM head
    (on the base model without pooler); ``has_pooler``: the base model has one (BERT, RoBERTa, ALBERT), which
    the sequence and multiple-choice classes keep when their head reads the pooled output; ``sequence_head``:
    the sequence classifier where it is not a linear layer on the pooled output (RoBERTa's two-layer head on
    the first token, without the pooler); ``choice_head``: the multiple-choice head where it is not a linear
    layer to one logit on the pooled output (None and no pooler: the family has no such class);
    ``head_first``: every class registers its head before the base model (XLM-RoBERTa).
    """
    under = ("", prefix)
    classes = {
        f"{stem}ForMaskedLM": model_class(mlm, pooler=False, flags=TIED, prefix=under, head_first=head_first),
        f"{stem}ForSequenceClassification": model_class(
            sequence_head or linear("classifier", "C", CLASSIFIER, tokens="B"),
            pooler=has_pooler and sequence_head is None, labels=True, prefix=under, head_first=head_first),
        f"{stem}ForTokenClassification": model_class(linear("classifier", "C", CLASSIFIER), pooler=False, labels=True,
                                                     prefix=under, head_first=head_first),
        # transformers' encoders read num_labels here (2 by default: the start and end logits)
        f"{stem}ForQuestionAnswering": model_class(linear("qa_outputs", "C", QA_HEAD), pooler=False, labels=True,
                                                   prefix=under, head_first=head_first),
    }
    if choice_head is not None or has_pooler:
        choice = choice_head or linear("classifier", "1", CLASSIFIER, tokens="B")
        classes[f"{stem}ForMultipleChoice"] = model_class(choice, prefix=under, head_first=head_first)
    return {**classes, **(extra or {})}


def expand_experts(gate: str, up: str, down: str, width: str, block: str = "mlp") -> Callable[[Param], list[Param]]:
    """A family's ``checkpoint_names``: fused experts as the checkpoints on disk name them, one tensor per expert.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    transformers 5 fuses E experts into ``mlp.experts.gate_up_proj`` (E × 2I × H, each
    expert's gate rows then its up rows) and ``mlp.experts.down_proj`` (E × H × I) when it loads a checkpoint
    (``conversion_mapping.py``: ``MergeModulelist(dim=0)``, ``Concatenate(dim=1)``); the files hold
    ``{block}.experts.{e}.{gate}.weight`` (I × H), ``...{up}.weight`` (I × H) and ``...{down}.weight`` (H × I).
    ``width``: the experts' symbol (Mixtral ``I``, Qwen3-MoE ``I_e``); ``block``: the MoE block's name on disk
    (Mixtral ``block_sparse_moe``, renamed to ``mlp`` on load, router included). Other tensors pass unchanged.
    """

    def on_disk(p: Param) -> list[Param]:
        name = p.name
        if block != "mlp" and (name.startswith("mlp.") or ".mlp." in name):
            at = name.index("mlp.") if name.startswith("mlp.") else name.index(".mlp.") + 1
            name = name[:at] + block + name[at + 3:]
        if name.endswith("experts.gate_up_proj"):
            E, rows, H = p.shape
            stem = name[: -len("gate_up_proj")]
            return [Param(f"{stem}{e}.{proj}.weight", (rows // 2, H), p.component, f"{width}*H", p.kind)
                    for e in range(E) for proj in (gate, up)]
        if name.endswith("experts.down_proj"):
            E, H, I = p.shape
            stem = name[: -len("down_proj")]
            return [Param(f"{stem}{e}.{down}.weight", (H, I), p.component, f"H*{width}", p.kind) for e in range(E)]
        return [replace(p, name=name)]

    return on_disk

