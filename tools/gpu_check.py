"""The harness of data/gpu_memory.json, on this machine's CUDA GPU: each measured step and generate call run for real,
torch.cuda.max_memory_allocated() beside the engine's closed form. Never run in CI (it needs a CUDA build of torch and a
GPU with room for the step: LLaMA-7B's rows need an 80 GB card).

    python tools/gpu_check.py [--out build/gpu_check.json] [--cases FILE] [CASE ...]

``--cases FILE`` takes the rows from FILE (data/gpu_memory.json's row format) instead: tools/gpu_heldout_cases.json
holds steps measured after the engine was written (data/gpu_memory_heldout.json stores what they printed).

The harness, as data/gpu_memory.json states it: bytes over torch.cuda.memory_allocated() taken just before the model is
built; the model built on the GPU from its config with random weights (full: fp32; lora/qlora: bf16); LoRA by peft
(r 16, alpha 32, all-linear, dropout 0) then enable_input_require_grads(); QLoRA's linear layers (all but lm_head)
replaced by bitsandbytes' Linear4bit (NF4, double quantization, bf16 compute), LoRA on q,k,v,o,gate,up,down_proj;
non-reentrant checkpointing; torch.optim.AdamW(lr=1e-5) foreach; two steps under torch.autocast when asked;
zero_grad(set_to_none=False); the peak over both steps. Generate: bf16 weights, greedy, exactly N new tokens.
Writes a JSON document with the GPU's name, the software's versions and one row per case (measured and engine).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import peak as P  # noqa: E402
from helpers.config import parse_config, read_json, resolve  # noqa: E402

QLORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def build(row: dict, torch, transformers):
    raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
    model_type = raw.pop("model_type")
    config = transformers.AutoConfig.for_model(model_type, **raw)
    dtype = torch.float32 if row["method"] == "full" else torch.bfloat16
    if row["method"] == "inference":
        dtype = torch.bfloat16
    cls = transformers.AutoModelForSequenceClassification if row.get("cls") else transformers.AutoModelForCausalLM
    if row.get("cls"):
        config.num_labels = row.get("num_labels", 2)
    with torch.device("cuda"):
        model = cls.from_config(config, dtype=dtype, attn_implementation=row["attn"])
    if row["method"] == "qlora":
        import bitsandbytes as bnb

        head = model.get_output_embeddings()
        for module in list(model.modules()):
            for name, child in list(module.named_children()):
                if type(child) is torch.nn.Linear and child is not head:
                    layer = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                              compute_dtype=torch.bfloat16, compress_statistics=True, quant_type="nf4")
                    layer.weight = bnb.nn.Params4bit(child.weight.data.cpu(), requires_grad=False,
                                                     compress_statistics=True, quant_type="nf4")
                    setattr(module, name, layer.cuda())
                    del child
        gc.collect()
    if row["method"] in ("lora", "qlora"):
        import peft

        targets = QLORA_TARGETS if row["method"] == "qlora" else "all-linear"
        model = peft.get_peft_model(model, peft.LoraConfig(r=16, lora_alpha=32, target_modules=targets,
                                                           lora_dropout=0.0))
        model.enable_input_require_grads()
    if row.get("checkpointing") == "full":
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model, config


def _engine(answer):
    """The closed form's answer, or the one line it refuses with (a family with no tape)."""
    try:
        return answer()
    except Exception as error:  # noqa: BLE001 - recorded, not raised: the GPU figure stands on its own
        return f"{type(error).__name__}: {error}"


def run(row: dict, torch, transformers) -> dict:
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    model, config = build(row, torch, transformers)
    loaded = torch.cuda.memory_allocated() - base
    vocab = config.vocab_size
    torch.cuda.reset_peak_memory_stats()
    if row["method"] == "inference":
        ids = torch.randint(0, vocab, (row["batch"], row["prompt"]), device="cuda")
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=row["new_tokens"], min_new_tokens=row["new_tokens"],
                                 do_sample=False)
        del out
        held = torch.cuda.memory_allocated() - base
        raw = {**read_json(resolve(row["model"])), **(row.get("override") or {})}
        engine = _engine(lambda: P.generate_peak(parse_config(raw, name=row["model"]), row["batch"], row["prompt"],
                                                 row["new_tokens"], "bf16", row["attn"]).peak_bytes)
    else:
        model.train()
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        ids = torch.randint(0, vocab, (row["batch"], row["seq_len"]), device="cuda")
        labels = torch.randint(0, row.get("num_labels", 2), (row["batch"],), device="cuda") if row.get("cls") else ids
        for _ in range(2):
            with torch.autocast("cuda", torch.bfloat16, enabled=row["autocast_bf16"]):
                loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            del loss
            opt.step()
            opt.zero_grad(set_to_none=False)
        torch.cuda.synchronize()
        held = torch.cuda.memory_allocated() - base
        del opt
        engine = _engine(lambda: P.training_peak(P.measured_step(row)).peak_bytes)
    torch.cuda.synchronize()
    result = {"case": row["case"], "loaded": loaded, "held": held, "peak_allocated": torch.cuda.max_memory_allocated() - base,
              "peak_reserved": torch.cuda.max_memory_reserved(), "engine_peak_bytes": engine}
    if isinstance(engine, int):
        result["ratio"] = engine / result["peak_allocated"]
    del model
    gc.collect()
    torch.cuda.empty_cache()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/gpu_check.json")
    parser.add_argument("--cases", dest="cases_file", help="rows from this file instead of data/gpu_memory.json")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    import torch
    import transformers

    if not torch.cuda.is_available():
        print("gpu-check: no CUDA GPU here (torch.cuda.is_available() is False): nothing run", file=sys.stderr)
        return 2
    source = json.loads(Path(args.cases_file).read_text()) if args.cases_file else P.measured()
    rows = [r for r in source["rows"] if not args.cases or r["case"] in args.cases]
    results = []
    for row in rows:
        try:
            result = run(row, torch, transformers)
        except torch.cuda.OutOfMemoryError:
            result = {"case": row["case"], "error": "out of memory on this GPU"}
            gc.collect()
            torch.cuda.empty_cache()
        except Exception as error:  # noqa: BLE001 - one case's failure is recorded, the others still run
            result = {"case": row["case"], "error": f"{type(error).__name__}: {error}"}
            gc.collect()
            torch.cuda.empty_cache()
        results.append({**{k: v for k, v in row.items() if k != "repeat"}, **result})
        if "ratio" in result:
            print(f"{row['case']:32s} GPU {result['peak_allocated']:>15,d}  engine {result['engine_peak_bytes']:>15,d}"
                  f"  ratio {result['ratio']:.4f}", flush=True)
        else:
            print(f"{row['case']:32s} GPU {result.get('peak_allocated', '-')}  {result.get('error') or result['engine_peak_bytes']}",
                  flush=True)
        _write(args.out, torch, transformers, results)
    print(f"written: {args.out}")
    return 0


def _write(out: str, torch, transformers, results: list[dict]) -> None:
    """The document so far (written after each case, so a run cut short keeps what it measured)."""
    import importlib.metadata as metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    free, total = torch.cuda.mem_get_info()
    props = torch.cuda.get_device_properties(0)
    doc = {"gpu": torch.cuda.get_device_name(), "cuda_total_bytes": total,
           "compute_capability": f"{props.major}.{props.minor}",
           "software": f"torch {torch.__version__}, transformers {transformers.__version__}, peft {version('peft')}, "
                       f"bitsandbytes {version('bitsandbytes')}",
           "harness": "tools/gpu_check.py (the harness of data/gpu_memory.json)", "rows": results}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
