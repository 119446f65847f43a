"""Every shipped config against transformers 5.23: ``python tests/benchmarks/family_table.py`` (from the repo root).

Totals and name/shape tables: transformers' class built on the meta device. FLOPs (B=1, S=8, eager attention)
and KV cache (bytes of past_key_values after that forward): on the meta device for dense models; a mixture of
experts cannot run on meta (routing reads values), so those two columns come from the tiny-config tests.
"""
import sys
import time
import warnings

sys.path.insert(0, ".")
warnings.filterwarnings("ignore")
import torch  # noqa: E402
import transformers  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from helpers import count_model, load_config, model_names, param_table  # noqa: E402
from helpers.config import raw_config  # noqa: E402
from helpers.flops import forward_flops  # noqa: E402
from helpers.memory import kv_cache_bytes  # noqa: E402
from helpers.params import EXPERT, param_layout  # noqa: E402

transformers.logging.set_verbosity_error()

B, S = 1, 8
rows = []
for name in model_names():
    raw, c = raw_config(name), load_config(name)
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    moe = any(p.kind == EXPERT for p, _ in param_layout(c).rows())  # routing reads values: no meta forward
    t = time.time()
    with torch.device("meta"):
        model = getattr(transformers, c.architecture)(config)
    build = time.time() - t
    ours = count_model(c)
    theirs = sum(p.numel() for p in model.parameters())
    tables = [(p.name, tuple(p.shape)) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    flops = kv = "tiny (test)"
    if not moe:
        ids = torch.zeros(B, S, dtype=torch.long, device="meta")
        kw = {"decoder_input_ids": ids} if config.is_encoder_decoder else {}
        if c.family.is_decoder:
            kw["use_cache"] = True
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            out = model(ids, **kw)
        flops = "yes" if counter.get_total_flops() == forward_flops(c, B, S).forward else f"NO {counter.get_total_flops()}"
        if c.family.is_decoder:
            cache = out.past_key_values
            caches = [getattr(cache, "self_attention_cache", cache)] + [getattr(cache, "cross_attention_cache", None)]
            got = sum(t.numel() * 2 for part in caches if part is not None
                      for layer in part.layers for t in (layer.keys, layer.values))
            want = kv_cache_bytes(c, B, S, "fp16")
            kv = "yes" if got == want else f"NO {got} vs {want}"
        else:
            kv = "encoder"
    active = f"{ours.active:,}" if ours.active != ours.total else ""
    rows.append((c.model_type, name, f"{ours.total:,}", f"{theirs:,}", "yes" if tables else "NO", flops, kv, active))
    print(" | ".join(rows[-1]), f"(transformers meta build {build:.2f} s)", flush=True)
    del model
