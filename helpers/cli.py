"""``python -m helpers``: count a model's parameters from its ``config.json``.

Introduced in ``00_overview``. It never imports torch, so it answers in a fraction of a second.

    python -m helpers count bert-base-uncased
    python -m helpers count bert-base-uncased --class BertForSequenceClassification --num-labels 3
    python -m helpers count mixtral-8x7b-v0.1 --tensors --names checkpoint
    python -m helpers count path/to/config.json --json
    python -m helpers flops bert-base-uncased --batch 1 --seq-len 128
    python -m helpers memory llama-7b --batch 1 --seq-len 2048 --dtype fp16
    python -m helpers memory llama-7b --gpus 8 --zero 3 [--tp 2]
    python -m helpers budget llama-7b --tokens 1e12 --gpu A100-80GB --mfu 0.4 [--gpus 2048]
    python -m helpers finetune llama-7b --method qlora --rank 16 [--targets q_proj,v_proj] [--optimizer adamw8bit]

A config that cannot be counted, or a bad option value (``--batch 0``, ``--dtype fp8``, ``--zero 4``,
``--mfu 1.5``, ``--gpu V100``, ``--class BertForPonies``, ``--num-labels 0``), gets one line on stderr naming
the field, and exit code 2. ``--class`` and ``--num-labels`` belong to ``count`` only (``flops``, ``memory`` and
``budget`` count the family's default class). ``flops`` and
``memory`` come from ``08_flops_and_memory``; ``budget`` and ``memory --gpus/--zero/--tp`` from ``10_budgets``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction
from typing import NoReturn, Sequence

from .config import ConfigError, ModelConfig, load_config, model_names
from .count import count_report, count_model, describe, named_params, naming_header, tensor_table, count_json
from .params import CHECKPOINT, TRANSFORMERS, checkpoint_layout
from . import budget as _budget
from . import fallback as _fallback
from . import finetune as _finetune
from . import flops as _flops
from . import memory as _memory
from . import peak as _peak
from . import serve as _serve

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line ``error: FIELD: problem`` and exit code 2, like bad input."""

    def error(self, message: str) -> NoReturn:
        field, problem = "COMMAND", message
        if message.startswith("argument "):
            field, _, problem = message[len("argument "):].partition(": ")
        elif message.startswith("the following arguments are required: "):
            field, problem = message.split(": ", 1)[1], "is required"
        print(f"error: {field}: {problem} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def _count(config: ModelConfig, args: argparse.Namespace) -> str:
    result = count_model(config)
    if args.names == CHECKPOINT:
        checkpoint_layout(config)  # refused in one line for a family without checkpoint names of its own
    if args.json:
        return json.dumps(count_json(result, args.names))
    text = f"{describe(config)}\n\n{count_report(result)}"
    if args.tensors:
        header = naming_header(result, args.names)
        text += "\n\n" + (header + "\n" if header else "") + tensor_table(named_params(result, args.names), result.total)
    return text


def _program() -> str:
    """The name the user typed: ``paramcount`` (the console command) or ``python -m helpers``."""
    return "paramcount" if os.path.basename(sys.argv[0]) == "paramcount" else "python -m helpers"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_program(),
        description="Exact parameter counts, FLOPs and memory for Transformer configs (Hugging Face config.json).",
        epilog=f"Shipped models (data/models/): {', '.join(model_names())}",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, run) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help)
        sub.add_argument("config", metavar="CONFIG", help="a config.json path or a model name in data/models/")
        sub.add_argument("--json", action="store_true", help="print a JSON document instead of tables")
        sub.set_defaults(run=run)
        return sub

    count = command("count", "every parameter tensor, by component", _count)
    count.add_argument("--tensors", action="store_true", help="also list every tensor (text output only)")
    count.add_argument("--class", dest="model_class", metavar="CLASS",
                       help="another transformers class of the family, e.g. BertForMaskedLM, GPT2Model (default: "
                            "the family's own: BertModel, LlamaForCausalLM ...)")
    count.add_argument("--num-labels", metavar="N", help="labels of the class's label head (default: the config's "
                                                         "num_labels or id2label, else 2)")
    count.add_argument("--names", choices=(TRANSFORMERS, CHECKPOINT), default=TRANSFORMERS,
                       help="tensor names for --tensors and --json: as transformers names them (default) or as the "
                            "checkpoints on disk do (a mixture's experts one by one)")

    flops = command("flops", "matrix-multiply FLOPs of one forward pass, by component", _flops_command)
    flops.add_argument("--batch", metavar="B", help="sequences in the batch (required)")
    flops.add_argument("--seq-len", metavar="S", help="tokens per sequence (required)")

    memory = command("memory", "bytes of weights, training state, KV cache and activations", _memory_command)
    memory.add_argument("--batch", metavar="B", help="sequences in the batch (default 1)")
    memory.add_argument("--seq-len", metavar="S", help="tokens per sequence (default: the model's context length)")
    memory.add_argument("--dtype", metavar="DTYPE", default="fp16",
                        help=f"inference weights and KV cache: {', '.join(_memory.DTYPE_BITS)} (default fp16)")
    memory.add_argument("--gpus", metavar="N", help="training state per GPU when N GPUs share the training (with --zero, --tp)")
    memory.add_argument("--zero", metavar="Z", help="ZeRO stage: 0 (data parallel), 1, 2 or 3 (= FSDP); default 0")
    memory.add_argument("--tp", metavar="T", help="tensor-parallel degree, dividing N and the heads (default 1)")
    memory.add_argument("--new-tokens", metavar="N", help="also the peak of model.generate: a prompt of --seq-len tokens, "
                                                         "N new tokens, transformers' default cache, in --dtype")
    memory.add_argument("--attn", metavar="ATTN", default="sdpa", help="with --new-tokens: sdpa (default) or eager")
    memory.add_argument("--simulate", action="store_true",
                        help="with --new-tokens: run generate itself on fake tensors (needs the [hf] extra)")

    budget = command("budget", "training FLOPs, GPU-hours and days, and the decode ceiling", _budget_command)
    budget.add_argument("--tokens", metavar="D", help="training tokens, e.g. 300000000000 or 3e11 (required)")
    budget.add_argument("--gpu", metavar="NAME", help="a GPU key of data/hardware.json, e.g. H100-SXM (required)")
    budget.add_argument("--mfu", metavar="U", help="model FLOPs utilisation, in (0, 1] (required)")
    budget.add_argument("--gpus", metavar="N", help="GPUs training together, for the days (default 1)")
    budget.add_argument("--seq-len", metavar="S", help="tokens per sequence (default: the model's context length)")
    budget.add_argument("--batch", metavar="B", help="sequences decoded together (default 1)")
    budget.add_argument("--dtype", metavar="DTYPE", default="bf16",
                        help=f"decode weights: {', '.join(_memory.DTYPE_BITS)} (default bf16; the KV cache stays bf16)")

    serve = command("serve", "what fits on the GPUs when vLLM serves it: KV tokens, sequences, ceilings", _serve_command)
    serve.add_argument("--gpu", metavar="NAME", help="a GPU key of data/hardware.json, e.g. H100-SXM (required)")
    serve.add_argument("--gpus", metavar="N", help="GPUs, tensor parallel (default 1)")
    serve.add_argument("--kv-dtype", metavar="DTYPE", default="bf16",
                       help=f"KV cache: {', '.join(_serve.KV_BITS)} (default bf16)")
    serve.add_argument("--weight-dtype", metavar="DTYPE",
                       help=f"weights: {', '.join(_serve.WEIGHT_BITS)} (scales not included) or {_serve.STORED} (a "
                            "pre-quantized checkpoint's bytes, scales included: the default where config.json has a "
                            "quantization_config; else bf16)")
    serve.add_argument("--max-model-len", metavar="S", help="tokens per sequence (default: the model's context length)")
    serve.add_argument("--gpu-memory-utilization", metavar="U", default="0.9",
                       help="the fraction of each GPU's memory vLLM may use (default 0.9)")
    serve.add_argument("--block-size", metavar="T", help="tokens per KV block (default 16)")
    serve.add_argument("--max-num-batched-tokens", metavar="T",
                       help=f"vLLM's prefill chunk, which a sliding-window layer reserves beside its window "
                            f"(default {_serve.DEFAULT_BATCHED})")
    serve.add_argument("--activation-reserve-gib", metavar="X", default=str(_serve.DEFAULT_RESERVE_GIB),
                       help=f"GiB per GPU for activations and non-torch memory, which vLLM measures by profiling "
                            f"(default {_serve.DEFAULT_RESERVE_GIB}, a stated stand-in)")
    _finetune_options(command)
    return parser


def _serve_command(config: ModelConfig, args: argparse.Namespace) -> str:
    if args.gpu is None:
        raise ConfigError("--gpu", f"is required: one of {', '.join(_budget.gpu_table())}")
    length = None if args.max_model_len is None else _positive("--max-model-len", args.max_model_len)
    plan = _serve.serve(config, args.gpu, _positive("--gpus", args.gpus, 1), args.kv_dtype, args.weight_dtype, length,
                        args.gpu_memory_utilization, _positive("--block-size", args.block_size, 16),
                        args.activation_reserve_gib,
                        _positive("--max-num-batched-tokens", args.max_num_batched_tokens, _serve.DEFAULT_BATCHED))
    if args.json:
        return json.dumps(_serve.serve_json(plan))
    return f"{describe(config)}\n\n{_serve.serve_report(plan)}"


# --- finetune: what a LoRA / QLoRA / full fine-tuning run holds -----------------------------------

def _finetune_options(command) -> None:
    """The ``finetune`` command and its options."""
    tune = command("finetune", "LoRA / QLoRA / full fine-tuning: trainable parameters and bytes", _finetune_command)
    tune.add_argument("--method", metavar="M", default="lora", help="full, lora or qlora (default lora)")
    tune.add_argument("--rank", metavar="R", help="LoRA rank r (default 8)")
    tune.add_argument("--alpha", metavar="A", help="LoRA alpha (scales the update; no byte; default 2r)")
    tune.add_argument("--targets", metavar="T", default=_finetune.ALL_LINEAR,
                      help="all-linear (peft's rule: every linear layer but the head; default) or module-name "
                           "suffixes, e.g. q_proj,v_proj (GPT-2: c_attn; BERT: query,value)")
    tune.add_argument("--batch", metavar="B", help="sequences in the batch (default 1)")
    tune.add_argument("--seq-len", metavar="S", help="tokens per sequence (default: the model's context length)")
    tune.add_argument("--optimizer", metavar="O", default="adamw", help="adamw, adamw8bit or sgd (default adamw)")
    tune.add_argument("--checkpointing", metavar="C", default="none", help="none or full (default none)")
    tune.add_argument("--weight-dtype", metavar="DTYPE", default="bf16",
                      help=f"the weights as loaded (full: trained in it; QLoRA: the unquantized ones): "
                           f"{', '.join(_memory.DTYPE_BITS)} (default bf16)")
    tune.add_argument("--autocast", metavar="A", default="none",
                      help="none or bf16: torch.autocast around the forward pass (with --weight-dtype fp32: torch AMP, "
                           "Hugging Face Trainer's bf16=True; default none)")
    tune.add_argument("--attn", metavar="ATTN", default="sdpa", help="sdpa (transformers' default) or eager")
    tune.add_argument("--class", dest="model_class", metavar="CLASS",
                      help="the transformers class trained (default: the language model; an encoder: its "
                           "...ForSequenceClassification)")
    tune.add_argument("--num-labels", metavar="N", help="labels of the class's label head (default 2)")
    tune.add_argument("--simulate", action="store_true",
                      help="run the real step on fake tensors (transformers, peft, torch; needs the [hf] extra) and "
                           "report its peak")


def _finetune_command(config: ModelConfig, args: argparse.Namespace) -> str:
    config.check_runs()  # transformers builds it but cannot run it: refused in one line naming the key
    batch, seq_len = _batch_and_length(config, args, required=False)
    rank = _positive("--rank", args.rank, 8)
    alpha = _positive("--alpha", args.alpha, 2 * rank)
    run = _finetune.Finetune(config, args.method, rank, args.targets, batch, seq_len, args.optimizer,
                             args.checkpointing, args.weight_dtype, alpha, args.autocast, args.attn)
    config.check_runs(attn=run.attn)  # a model only eager attention runs: refused with sdpa
    if args.simulate:
        return _finetune_simulated(config, run, args.json)
    if args.json:
        return json.dumps(_finetune.finetune_json(run))
    return f"{describe(config)}\n\n{_finetune.finetune_report(run)}"


def _finetune_simulated(config: ModelConfig, run: _finetune.Finetune, as_json: bool) -> str:
    """``finetune --simulate``: the step run by :mod:`helpers.simulate`; its peak replaces the closed form's."""
    from . import simulate as _simulate

    result = _simulate.simulate_run(config, run)
    if as_json:
        return json.dumps({**_finetune.finetune_json(run), **_simulate.simulate_json(result)})
    return f"{describe(config)}\n\n{_finetune.finetune_report(run)}\n\n{_simulate.simulate_report(result)}"


GENERATE_DTYPES = ("fp32", "fp16", "bf16")  # what transformers' generate runs the weights in


def _dtype(dtype: str, allowed: tuple[str, ...] | None = None, rule: str | None = None) -> None:
    """Refuse a ``--dtype`` outside ``allowed`` (every dtype of :data:`helpers.memory.DTYPE_BITS` by default) in one
    line naming the option and the rule (by default, the list)."""
    allowed = tuple(_memory.DTYPE_BITS) if allowed is None else allowed
    if dtype not in allowed:
        raise ConfigError("--dtype", f"{rule or 'must be one of ' + ', '.join(allowed)}, got {dtype!r}")


def _positive(option: str, value: str | None, default: int | None = None) -> int:
    """An option's value as a positive integer, or a ConfigError naming the option."""
    if value is None:
        if default is None:
            raise ConfigError(option, "is required (a positive integer)")
        return default
    if not value.isascii() or not value.isdigit():  # int() would also take "1_000", " 8" or "+8"
        raise ConfigError(option, f"must be a positive integer, got {value!r}")
    number = int(value)
    if number < 1:
        raise ConfigError(option, f"must be a positive integer, got {number}")
    return number


def _batch_and_length(config: ModelConfig, args: argparse.Namespace, required: bool) -> tuple[int, int]:
    """--batch and --seq-len, checked against the positions the model has."""
    longest = _flops.max_seq_len(config)
    if longest is not None and longest < 1:
        raise ConfigError("max_position_embeddings", f"{config['P']} leaves no position for a token "
                          f"(RoBERTa numbers positions from pad_token_id + 1 = {config['P'] - longest})")
    batch = _positive("--batch", args.batch, None if required else 1)
    # memory's default length: what the position table covers (LLaMA: its trained context, P)
    default = config.sizes.get("P") if longest is None else longest
    if args.seq_len is None and default is None and not required:
        raise ConfigError("--seq-len", f"{config.name} states no context length (no position table, no "
                                       "max_position_embeddings): give --seq-len")
    seq_len = _positive("--seq-len", args.seq_len, None if required else default)
    if longest is not None and seq_len > longest:
        raise ConfigError("--seq-len", f"{config.name} has positions for at most {longest} tokens, got {seq_len}")
    return batch, seq_len


def _flops_command(config: ModelConfig, args: argparse.Namespace) -> str:
    config.check_runs()  # transformers builds it but cannot run it: refused in one line naming the key
    batch, seq_len = _batch_and_length(config, args, required=True)
    result = _flops.forward_flops(config, batch, seq_len)
    if args.json:
        return json.dumps(_flops.flops_json(result))
    notes = config.family.notes(config) if config.family.notes is not None else []
    text = [describe(config), *notes, "",
            f"one forward pass on B = {batch} × S = {seq_len} tokens: matrix multiplies only, 2 FLOPs per multiply-add;",
            "training = forward + backward (backward = 2 × forward for every matmul a gradient flows through)", "",
            _flops.flops_report(result), "", _flops.six_n_d_report(result)]
    return "\n".join(text)


def _stage(value: str | None) -> int:
    """--zero as a ZeRO stage 0-3, or a ConfigError."""
    if value is None:
        return 0
    if value not in ("0", "1", "2", "3"):
        raise ConfigError("--zero", f"must be 0, 1, 2 or 3 (the ZeRO stages), got {value!r}")
    return int(value)


def _tokens(value: str | None) -> int:
    """--tokens as a positive whole number: digits, or a decimal or scientific form of a whole number (3e11)."""
    if value is None:
        raise ConfigError("--tokens", "is required (a positive number of tokens, e.g. 3e11)")
    try:
        number = Fraction(value) if value.isascii() and value.strip() == value else None
    except (ValueError, ZeroDivisionError):
        number = None
    if number is None or "/" in value or "_" in value:
        raise ConfigError("--tokens", f"must be a positive number of tokens, got {value!r}")
    if number.denominator != 1 or number < 1:
        raise ConfigError("--tokens", f"must be a positive whole number of tokens, got {value}")
    return int(number)


def _mfu(value: str | None) -> float:
    """--mfu as a fraction in (0, 1]."""
    if value is None:
        raise ConfigError("--mfu", "is required (model FLOPs utilisation, in (0, 1])")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError("--mfu", f"must be a number in (0, 1], got {value!r}") from None
    if not 0 < number <= 1:  # NaN fails too
        raise ConfigError("--mfu", f"must be in (0, 1] (a fraction of the peak), got {value}")
    return number


def _budget_command(config: ModelConfig, args: argparse.Namespace) -> str:
    config.check_runs()  # transformers builds it but cannot run it: refused in one line naming the key
    tokens, mfu = _tokens(args.tokens), _mfu(args.mfu)
    if args.gpu is None:
        raise ConfigError("--gpu", f"is required: one of {', '.join(_budget.gpu_table())}")
    device = _budget.gpu(args.gpu)
    gpus = _positive("--gpus", args.gpus, 1)
    batch, seq_len = _batch_and_length(config, args, required=False)
    _dtype(args.dtype)
    plan = _budget.training_budget(config, tokens, device, mfu, gpus, seq_len)
    step = None
    if _memory.kv_cache_formula(config) is not None:
        step = _budget.decode(config, device, batch, seq_len, args.dtype)
    if args.json:
        return json.dumps(_budget.budget_json(plan, step))
    return f"{describe(config)}\n\n{_budget.budget_report(plan, step)}"


def _memory_command(config: ModelConfig, args: argparse.Namespace) -> str:
    config.check_runs()  # transformers builds it but cannot run it: refused in one line naming the key
    if args.gpus is not None or args.zero is not None or args.tp is not None:
        if args.gpus is None:
            raise ConfigError("--gpus", "is required with --zero or --tp (a positive integer)")
        gpus, zero, tp = _positive("--gpus", args.gpus), _stage(args.zero), _positive("--tp", args.tp, 1)
        if args.json:
            return json.dumps(_budget.sharded_json(config, gpus, zero, tp))
        return f"{describe(config)}\n\n{_budget.sharded_report(config, gpus, zero, tp)}"
    batch, seq_len = _batch_and_length(config, args, required=False)
    _dtype(args.dtype)
    result = _memory.Memory(config, batch, seq_len, args.dtype)
    if args.new_tokens is None:
        for option in ("simulate",):
            if getattr(args, option):
                raise ConfigError(f"--{option}", "goes with --new-tokens (the peak of generate)")
        if args.json:
            return json.dumps(_memory.memory_json(result))
        return f"{describe(config)}\n\n{_memory.memory_report(result)}"
    new_tokens = _positive("--new-tokens", args.new_tokens)
    if args.attn not in _peak.ATTN:
        raise ConfigError("--attn", f"must be one of {', '.join(_peak.ATTN)}, got {args.attn!r}")
    _dtype(args.dtype, GENERATE_DTYPES, "generate runs the weights in fp32, fp16 or bf16")
    if _memory.kv_cache_formula(config) is None:
        raise ConfigError("--new-tokens", f"{config.name} is an encoder: it generates no tokens")
    config.check_runs(attn=args.attn)  # a model only eager attention runs: refused with sdpa
    doc = _generate_doc(config, batch, seq_len, new_tokens, args)
    if args.json:
        return json.dumps({**_memory.memory_json(result), **doc})
    return f"{describe(config)}\n\n{_memory.memory_report(result)}\n\n{_generate_text(doc)}"


def _generate_doc(config: ModelConfig, batch: int, seq_len: int, new_tokens: int, args: argparse.Namespace) -> dict:
    """``memory --new-tokens``: the peak of generate, by the closed form or (``--simulate``) by the run itself."""
    if args.simulate:
        from . import simulate as _simulate

        if not config.raw:
            raise ConfigError("--simulate", "needs the config's own keys (a config.json)")
        sim = _simulate.simulate_generate(config.raw, batch, seq_len, new_tokens, args.dtype, args.attn)
        return {"new_tokens": new_tokens, "attn": args.attn, "generate_peak_bytes": sim.peak_bytes + sim.workspace,
                "generate_peak_phase": sim.peak_phase, "generate_counted_by": "simulation (helpers.simulate)",
                "generate_phases": sim.phases, "generate_seconds": round(sim.seconds, 1)}
    peak = _peak.generate_peak(config, batch, seq_len, new_tokens, args.dtype, args.attn)
    return {"new_tokens": new_tokens, "attn": args.attn, "generate_peak_bytes": peak.peak_bytes,
            "generate_peak_phase": peak.peak_phase, "generate_counted_by": "closed form (helpers.peak)",
            "generate_phases": peak.phases, "generate_fits": _peak.fits(peak, threads=1)}


def _generate_text(doc: dict) -> str:
    lines = [f"generate, {doc['new_tokens']} new tokens ({doc['attn']} attention): peak "
             f"{doc['generate_peak_bytes']:,} bytes ({_memory.fmt_bytes(doc['generate_peak_bytes'])}) in the "
             f"{doc['generate_peak_phase']}, {doc['generate_counted_by']}"]
    for phase, parts in doc["generate_phases"].items():
        if isinstance(parts, dict):
            lines.append(f"  {phase}: " + "; ".join(f"{k} {v:,}" for k, v in parts.items()))
    if "generate_fits" in doc:
        lines.append(f"  fits (the peak, the allocator's reserve up to {_peak.reserve_margin(generate=True):.1%} as "
                     "measured in generate, and a 0.5 GiB context, within the memory CUDA reports): "
                     + "; ".join(f"{k} {v['fits']}" for k, v in doc["generate_fits"].items()))
    return "\n".join(lines)


def _by_transformers(name: str, raw: dict, labels: int | None, args: argparse.Namespace, untaught: str = "",
                     refusal: ConfigError | None = None) -> str:
    """``count`` and ``memory`` of a model type no family teaches (or of a key its family does not model: ``untaught``,
    ``refusal`` the engine's own one-line answer), counted by transformers; the rest refused."""
    model_type = raw["model_type"]
    if args.command not in ("count", "memory"):
        raise refusal or _fallback.refuse(model_type, args.command)
    for option in ("names", "batch", "seq_len", "gpus", "zero", "tp"):
        value = getattr(args, option, None)
        if value is not None and value != TRANSFORMERS:
            raise refusal or _fallback.refuse(model_type, f"--{option.replace('_', '-')}")
    if args.command == "memory":
        _dtype(args.dtype)
    result = _fallback.count_by_transformers(raw, name, getattr(args, "model_class", None), labels, untaught=untaught)
    if args.command == "memory":
        return json.dumps(_fallback.memory_json(result)) if args.json else _fallback.memory_report(result)
    return json.dumps(_fallback.count_json(result)) if args.json else _fallback.count_report(result, args.tensors)


FLAGS_ANYWHERE = ("--simulate", "--json")


def _flags_last(argv: Sequence[str]) -> list[str]:
    """The flags that take no value moved to the end, so that ``--rank --simulate 16`` (a flag dropped between an option
    and its value by a script that assembles the command) reads as ``--rank 16 --simulate``."""
    return [a for a in argv if a not in FLAGS_ANYWHERE] + [a for a in argv if a in FLAGS_ANYWHERE]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.
    Introduced in ``00_overview``."""
    args = _parser().parse_args(_flags_last(sys.argv[1:] if argv is None else argv))
    try:
        labels = getattr(args, "num_labels", None)
        labels = None if labels is None else _positive("--num-labels", labels)
        try:
            config = load_config(args.config, model_class=getattr(args, "model_class", None), num_labels=labels)
        except ConfigError as error:  # a model_type with no family, or a key it does not model: transformers counts it
            untaught = _fallback.untaught_config(args.config) if error.field == "model_type" else None
            unmodelled = None if untaught else _fallback.unmodelled_config(args.config, error)
            if untaught is not None:
                output = _by_transformers(*untaught, labels, args)
            elif unmodelled is not None:
                name, raw, what = unmodelled
                output = _by_transformers(name, raw, labels, args, what, error)
            else:
                raise
        else:
            output = args.run(config, args)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        print(output)
    except BrokenPipeError:  # `python -m helpers count ... | head`: the reader left, say no more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
