"""Matrix-multiply FLOPs of one forward pass, component by component, derived from the parameter table.

Introduced in ``08_flops_and_memory``; ``python -m helpers flops`` prints it. It never imports torch.

What is counted is what ``torch.utils.flop_counter.FlopCounterMode`` counts: matrix multiplies only,
2 FLOPs per multiply-add (``2·m·n·k``); a bias add, a norm, a softmax or an embedding lookup costs 0.

* A linear layer whose weight has ``in·out`` entries, applied to ``t`` tokens, costs ``2·t·in·out``: the
  attention projections, the feed-forward matrices and the LM head run on every one of the ``B·S``
  tokens; BERT's pooler runs on the [CLS] token only (``t = B``). An embedding table is a lookup (0),
  unless the LM head is tied to it: then the same table is also a ``V×H`` matrix multiply.
* Attention itself has no parameters but two matmuls of ``S×S`` per head (scores ``QKᵀ`` and the
  weighted sum of values), ``2·2·B·S²·d_k`` FLOPs per head, as eager attention computes them in full
  (causal models too: the mask is applied after the multiply).
* LLaMA's rotary angles are an outer product built elementwise (``positions[..., None] * inv_freq``)
  in transformers 5 and in ``helpers.torch_ref``: no matmul, 0 FLOPs. (transformers 4.x built them
  with a small matmul of ``d_k·S`` FLOPs; FlopCounterMode counted it there.)

Training: the backward pass of ``y = x·W`` costs two matmuls of the same size (``∂x`` and ``∂W``), so
every matmul costs 3× its forward FLOPs in a training step.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import ConfigError, ModelConfig
from .params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, BIAS, CONVOLUTION, DELTA_RULE, EMBEDDINGS, EXPERT, EXPERT_BIAS, FEED_FORWARD,
    LM_HEAD, NORM, POOLER, TABLE, VISION, WITHOUT_PARAMETERS, Param, evaluate, matmul_count, param_layout, render,
)
from .report import fmt_int, fmt_share, table

# the component a weight matrix of each parameter component is counted under
_MATMUL_COMPONENTS = {ATTENTION: ATTENTION_PROJECTIONS, FEED_FORWARD: FEED_FORWARD, POOLER: POOLER, LM_HEAD: LM_HEAD}

# each family's FLOP formulas (component -> formula over the config's symbols, B and S) are in helpers.families

# what a line counts that a kernel in use may not do: printed under the table (and in --json) where the line appears
NOTES = {
    DELTA_RULE: "the gated delta rule is counted by its recurrence, per token and value head: the state read with the "
                "key (2·d_k·d_v), its rank-1 update (2·d_k·d_v) and the read-out with the query (2·d_k·d_v); a chunked "
                "kernel (FLA's chunk_gated_delta_rule, transformers' torch fallback with chunks of 64, which is what "
                "FlopCounterMode sees on a prefill) does a different, larger amount of work: in-chunk key-key and "
                "query-key products and a triangular solve, over the sequence padded to whole chunks",
}


@dataclass(frozen=True)
class FlopLine:
    """One component of a forward pass: its formula, its forward FLOPs and its backward FLOPs.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    component: str
    formula: str
    forward: int
    backward: int

    @property
    def training(self) -> int:
        """Forward + backward FLOPs of this component in one training step."""
        return self.forward + self.backward


@dataclass(frozen=True)
class Flops:
    """The FLOPs of one forward pass (and one training step) of a model on a ``B × S`` batch.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    config: ModelConfig
    batch: int
    seq_len: int
    lines: tuple[FlopLine, ...]

    @property
    def tokens(self) -> int:
        """D = B·S, the tokens in the batch."""
        return self.batch * self.seq_len

    @property
    def forward(self) -> int:
        return sum((line.forward for line in self.lines), 0)

    @property
    def backward(self) -> int:
        return sum((line.backward for line in self.lines), 0)

    @property
    def training(self) -> int:
        """Forward + backward: 3× forward for every matmul a gradient flows through."""
        return self.forward + self.backward

    def by_component(self) -> dict[str, int]:
        """Forward FLOPs per component, in table order."""
        return {line.component: line.forward for line in self.lines}


def tied_table(config: ModelConfig) -> str | None:
    """The name of the embedding table the LM head reuses as a matmul, or None (untied, or no LM head).

    Introduced in ``01_embeddings``.
    """
    for p, _ in param_layout(config).rows():
        if p.kind == TABLE and p.tokens:  # a table that multiplies: the LM head, tied to it
            return p.name
    return None


def matmul_tokens(param: Param, config: ModelConfig, batch: int, seq_len: int) -> int:
    """How many tokens a parameter tensor multiplies in a forward pass (0: not a matmul weight).

    Introduced in ``08_flops_and_memory``. Read from the tensor's ``tokens``, which its family's builder
    sets: weight matrices see all ``B·S`` tokens, BERT's pooler only the ``B`` [CLS] tokens; a tied token
    table is also the LM head. Biases and norm gains and embedding lookups are 0.
    """
    if param.kind == EXPERT_BIAS:  # added to the routed slots, no matmul
        return 0
    return evaluate(param.tokens, config, B=batch, S=seq_len) if param.tokens else 0


def flop_formulas(config: ModelConfig) -> dict[str, str]:
    """Forward FLOPs of each component as formulas over the config's symbols and ``B``, ``S``.

    No notebook calls it; it works behind the helpers of ``00_overview``. The family's default class only:
    another class (``--class``) is refused in one line naming ``--class``.
    """
    if config.model_class is not None:
        raise ConfigError("--class", f"FLOPs are modelled for {config.family.architecture} only, not "
                                     f"{config.model_class}")
    return config.family.flops(config)


def _from_table(config: ModelConfig, batch: int, seq_len: int) -> dict[str, int]:
    """Forward FLOPs of every parameterised component, summed tensor by tensor: 2·tokens·in·out.

    A layer of a stack is counted once and multiplied by the number of layers.
    """
    counted: dict[str, int] = {}
    for p, repeat in param_layout(config).rows():
        tokens = matmul_tokens(p, config, batch, seq_len)
        component = LM_HEAD if p.kind == TABLE else _MATMUL_COMPONENTS.get(p.component, p.component)
        if tokens:
            counted[component] = counted.get(component, 0) + repeat * 2 * tokens * matmul_count(p)
    return counted


def forward_flops(config: ModelConfig, batch: int, seq_len: int) -> Flops:
    """Matmul FLOPs of one forward pass on ``batch × seq_len`` tokens, by component, with backward FLOPs.

    Introduced in ``00_overview``. Derived in ``08_flops_and_memory``: every weight matrix is counted
    from the parameter table (``2·tokens·in·out``) and checked against its component formula; the
    attention ``S×S`` matmuls, which have no parameters, come from their formula.
    """
    if batch < 1 or seq_len < 1:
        raise ValueError(f"batch and seq_len must be positive, got {batch} and {seq_len}")
    config.check_runs()  # a model transformers builds but cannot run: refused, naming the key
    formulas = flop_formulas(config)
    values = {name: evaluate(formula, config, B=batch, S=seq_len) for name, formula in formulas.items()}
    counted = _from_table(config, batch, seq_len)
    assert set(counted) <= set(formulas), (list(counted), list(formulas))
    for component in formulas:
        if component not in WITHOUT_PARAMETERS:  # the S×S scores and a linear attention's recurrence
            assert values[component] == counted.get(component, 0), (component, formulas[component])
    lines = tuple(
        FlopLine(name, formulas[name], values[name], 2 * values[name]) for name in formulas
    )
    return Flops(config, batch, seq_len, lines)


# --- the 6·N·D rule ------------------------------------------------------------------------------

def six_n_d(config: ModelConfig, batch: int, seq_len: int, parameters: int | None = None) -> int:
    """The rule of thumb for one training step: 6 × parameters × tokens (D = B·S).

    Introduced in ``08_flops_and_memory``. N is every parameter, embeddings included, as Hoffmann et al. 2022
    (Chinchilla, Appendix F) count it, unless ``parameters`` gives another N (e.g. Kaplan et al. 2020's
    :func:`non_embedding_parameters`).
    """
    N = param_layout(config).total if parameters is None else parameters
    return 6 * N * batch * seq_len


def six_n_d_gap(flops: Flops) -> dict[str, int]:
    """Why ``6·N·D`` and the counted training FLOPs differ, term by term (they sum to ``6·N·D − training``).

    Introduced in ``08_flops_and_memory``. 6·N·D charges every parameter 6 FLOPs per token; the count
    charges 6 per token only to weight matrices. Positive terms: parameters 6·N·D charges but no matmul
    uses per token; negative terms: matmuls without parameters, which 6·N·D does not see.
    """
    c, B, D = flops.config, flops.batch, flops.tokens
    every = list(param_layout(c).rows())
    rows = [(p, n) for p, n in every if p.component != VISION]  # a vision tower runs on images, not on text tokens
    vision = sum((n * p.count for p, n in every if p.component == VISION), 0)
    lookups = sum((n * p.count for p, n in rows if p.kind == TABLE and not matmul_tokens(p, c, B, flops.seq_len)), 0)
    elementwise = sum((n * p.count for p, n in rows if p.kind in (BIAS, NORM)), 0) + sum(
        (n * min(p.count, matmul_count(p) * evaluate(p.tokens, c, B=1, S=1)) for p, n in rows if p.kind == EXPERT_BIAS), 0)
    pooler = sum((n * p.count for p, n in rows if p.component == POOLER and p.tokens), 0)
    # a mixture of experts: the routed experts' weights each token leaves unused (E − k of E)
    idle = sum((n * (p.count - matmul_count(p) * evaluate(p.tokens, c, B=1, S=1)) for p, n in rows
                if p.kind in (EXPERT, EXPERT_BIAS)), 0)
    # a weight run more than once per token (ALBERT's shared layers: stored once, run L times): 6·N·D charges it once
    reruns = sum((n * matmul_count(p) * (matmul_tokens(p, c, B, flops.seq_len) - D) for p, n in rows
                  if p.kind not in (EXPERT, CONVOLUTION) and matmul_tokens(p, c, B, flops.seq_len) > D), 0)
    # a weight stored but run on no token: ALBERT's groups beyond its layers (or with no layer), a decoder's
    # cross-attention with no encoder states given (the blocks skip it)
    unused = sum((n * p.count for p, n in rows if p.kind not in (TABLE, BIAS, NORM, EXPERT, EXPERT_BIAS)
                  and p.component != POOLER and not matmul_tokens(p, c, B, flops.seq_len)), 0)
    # a convolution computed over padded positions (Qwen3-Next's conv1d as transformers' torch path runs it)
    padded = sum((n * p.count * (matmul_tokens(p, c, B, flops.seq_len) - D) for p, n in rows if p.kind == CONVOLUTION), 0)
    parts = flops.by_component()
    gap = {
        "embedding tables (lookups, no matmul)": 6 * D * lookups,
        "biases and norm gains (elementwise)": 6 * D * elementwise,
    }
    if vision:
        gap["vision tower and projector (no text token runs through them)"] = 6 * D * vision
    if POOLER in parts:
        gap["pooler on the [CLS] token only"] = 6 * (D - B) * pooler
    if idle:
        gap["routed experts a token does not use"] = 6 * D * idle
    if reruns:
        gap["shared weights run again (stored once in N)"] = -6 * reruns
    if unused:
        gap["weights stored but run on no token"] = 6 * D * unused
    if padded:
        gap["a convolution's padded positions (more outputs than tokens)"] = -6 * padded
    gap["attention scores/values (S², no parameters)"] = -3 * parts.get(ATTENTION_SCORES, 0)
    if DELTA_RULE in parts:
        gap["gated delta rule (a state, no parameters)"] = -3 * parts[DELTA_RULE]
    assert sum(gap.values()) == six_n_d(c, B, flops.seq_len) - flops.training
    return gap


# --- which N: Kaplan's, Chinchilla's, PaLM's ---------------------------------------------------------

def non_embedding_parameters(config: ModelConfig) -> int:
    """Kaplan et al. 2020's N: every parameter except the embedding tables and an untied LM head.

    Introduced in ``08_flops_and_memory``. Kaplan et al. (§1.3, eq. 2.1) count "the number of model parameters,
    excluding all vocabulary and positional embeddings", ``≈ 12·L·H²`` for a GPT layer; biases, norms and
    BERT's pooler are kept. Hoffmann et al. 2022 (Chinchilla, Appendix F) count every parameter instead
    (:func:`six_n_d`'s N). An untied output matrix (LLaMA's ``lm_head``) is a vocabulary table too.
    """
    return sum((n * p.count for p, n in param_layout(config).rows() if p.component not in (EMBEDDINGS, LM_HEAD)), 0)


def matmul_parameters(config: ModelConfig) -> int:
    """The parameters every token multiplies: the weight matrices on all B·S tokens, the LM head included.

    Introduced in ``08_flops_and_memory``. Lookups (embedding tables not reused as the head), biases and norm
    gains (1-D) and BERT's pooler (which multiplies only the [CLS] token) are left out. Read as PaLM's N, it
    makes ``(6N + 12·L·A·d_k·S)·B·S`` equal the counted training FLOPs (see :func:`palm_training_flops`).
    """
    return sum((n * p.count for p, n in param_layout(config).rows() if p.tokens == "B*S"), 0)


PALM_PER_TOKEN = "6*N + 12*L*A*d_k*S"  # Chowdhery et al. 2022, Appendix B: 6N + 12·L·H·Q·T (H heads of size Q)


def palm_training_flops(config: ModelConfig, batch: int, seq_len: int) -> int:
    """PaLM's training FLOPs, ``(6N + 12·L·A·d_k·S)·B·S``, with N = :func:`matmul_parameters`.

    Introduced in ``08_flops_and_memory``. Chowdhery et al. 2022 (Appendix B) price a training token at
    ``6N + 12·L·H·Q·T`` (L layers, H heads of size Q, T tokens of context): 6 FLOPs per weight, and the two
    full ``S×S`` matmuls forward and backward. For GPT-2 and LLaMA it equals the counted training FLOPs exactly;
    for BERT it falls short by the pooler's ``6·B·H²`` (a weight that multiplies one token per sequence).
    """
    return evaluate(PALM_PER_TOKEN, config, N=matmul_parameters(config), S=seq_len) * batch * seq_len


# --- causal attention: only the lower triangle of S×S is needed ------------------------------------------



def causal_scores_flops(config: ModelConfig, batch: int, seq_len: int) -> int:
    """Forward FLOPs of the ``S×S`` matmuls of a decoder when only the causal triangle is computed.

    Introduced in ``08_flops_and_memory``. Query ``i`` attends to keys ``1..i``: ``S(S+1)/2`` query-key pairs
    of the ``S²`` per head, for the scores and again for the weighted values: ``2·L·B·S·(S+1)·A·d_k``, a little
    over half of the full ``4·L·B·S²·A·d_k`` that eager attention (and ``FlopCounterMode``) counts. Causal
    kernels (FlashAttention, xformers) skip the masked blocks, tile by tile, so they compute between the two.
    It is the family's own S×S FLOPs times (S + 1)/(2S), so value heads of another width (DeepSeek-V3's
    d_v ≠ d_k) are counted as they are. An encoder attends both ways (BERT, RoBERTa), and so do an
    encoder–decoder's encoder and cross-attention (T5): both are refused.
    """
    if not config.family.is_decoder or "L_d" in config.sizes:
        raise ValueError(f"{config.name}: not a decoder-only model, its attention is not one causal triangle")
    full = forward_flops(config, batch, seq_len).by_component()[ATTENTION_SCORES]
    pairs, whole = full * (seq_len + 1), 2 * seq_len  # of the S² query-key pairs, S(S+1)/2 are computed
    assert pairs % whole == 0, (config.name, full)
    return pairs // whole


def causal_training_flops(flops: Flops) -> int:
    """Training FLOPs when the ``S×S`` matmuls (forward and backward) keep only the causal triangle.

    Introduced in ``08_flops_and_memory``.
    """
    full = flops.by_component()[ATTENTION_SCORES]
    return flops.training - 3 * (full - causal_scores_flops(flops.config, flops.batch, flops.seq_len))


# --- what a model can run ------------------------------------------------------------------------

def max_seq_len(config: ModelConfig) -> int | None:
    """The longest sequence the model's position table covers, or None (LLaMA: rotary, no table).

    No notebook calls it; it works behind the helpers of ``10_budgets``.
    RoBERTa numbers positions from ``pad_token_id + 1``
    (2 with transformers' default ``pad_token_id = 1``), so it runs at most ``P − pad_token_id − 1`` tokens.
    """
    return config.family.positions(config)


# --- output ---------------------------------------------------------------------------------------

def flops_report(flops: Flops) -> str:
    """The per-component table: formula, forward FLOPs, share of the forward pass, training FLOPs.

    Introduced in ``08_flops_and_memory``.
    """
    whole = flops.forward
    rows = [(line.component, render(line.formula), fmt_int(line.forward), fmt_share(line.forward, whole),
             fmt_int(line.training)) for line in flops.lines]
    rows.append(("total", "", fmt_int(whole), fmt_share(whole, whole), fmt_int(flops.training)))
    text = table(("component", "formula", "forward FLOPs", "share", "training FLOPs"), rows, right=(2, 3, 4))
    return "\n".join([text, *(f"note: {note}" for note in flop_notes(flops).values())])


WINDOW_NOTE = ("{n} windowed, chunked or local layers are counted as eager attention runs them (what FlopCounterMode "
               "measures): every layer scores all S×S positions and masks them after the matmul; a kernel that skips "
               "masked blocks (flash attention with a window) does about S·W per head in those layers instead")


def _windowed_layers(config: ModelConfig) -> int:
    """Layers whose attention a window, a chunk or a local span limits (transformers' cache lists, or L_w and L_c)."""
    cache = config.lists.get("cache")
    if cache:
        return cache[1] + cache[2]
    return config.sizes.get("L_w", 0) + config.sizes.get("L_c", 0)


def flop_notes(flops: Flops) -> dict[str, str]:
    """What a line of the table counts that a kernel in use may not do (:data:`NOTES`, and :data:`WINDOW_NOTE` for a
    model with windowed layers), for the lines it has.

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    notes = {line.component: NOTES[line.component] for line in flops.lines if line.component in NOTES}
    windowed = _windowed_layers(flops.config)
    if windowed and any(line.component == ATTENTION_SCORES for line in flops.lines):
        notes[ATTENTION_SCORES] = WINDOW_NOTE.format(n=windowed)
    return notes


def six_n_d_report(flops: Flops) -> str:
    """Counted training FLOPs beside 6·N·D, and the terms that make up their difference.

    Introduced in ``08_flops_and_memory``.
    """
    c = flops.config
    N, D = param_layout(c).total, flops.tokens
    rule = six_n_d(c, flops.batch, flops.seq_len)
    rows = [
        ("training (counted: forward + backward)", fmt_int(flops.training)),
        (f"6·N·D (N = {fmt_int(N)}, D = B·S = {fmt_int(D)})", fmt_int(rule)),
        ("6·N·D − training", fmt_int(rule - flops.training)),
    ]
    rows += [(f"  {reason}", f"{value:+,}") for reason, value in six_n_d_gap(flops).items()]
    return table(("", "FLOPs"), rows, right=(1,))


def flops_json(flops: Flops) -> dict[str, object]:
    """The ``python -m helpers flops --json`` document.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    c = flops.config
    return {
        "model": c.name,
        "batch": flops.batch,
        "seq_len": flops.seq_len,
        "tokens": flops.tokens,
        "forward_flops": flops.forward,
        "training_flops": flops.training,
        "breakdown": [
            {"component": line.component, "formula": line.formula, "forward_flops": line.forward,
             "training_flops": line.training}
            for line in flops.lines
        ],
        **({"notes": flop_notes(flops)} if flop_notes(flops) else {}),
        "six_n_d": {
            "parameters": param_layout(c).total,
            "tokens": flops.tokens,
            "flops": six_n_d(c, flops.batch, flops.seq_len),
            "minus_training_flops": six_n_d_gap(flops),
        },
    }
