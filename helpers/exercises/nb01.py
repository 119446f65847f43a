"""Exercises of ``01_embeddings``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config
from ..lessons.embeddings import embedding_share, embedding_tables
from ..flops import forward_flops
from ..params import EMBEDDINGS, param_table, select, total

# 01.1's choices: the model each letter names (the reasons are in the notebook)
_POSITION_CHOICES = {"a": "roberta-base", "b": "gpt2", "c": "llama-7b", "d": "bert-base-chinese"}


def _llama_token_share() -> float:
    """01.3: the share of llama-7b in its embedding table (the input one; its untied head is apart), in percent."""
    return 100 * embedding_share(load_config("llama-7b"))


def _no_position_table() -> str:
    """01.1: the one choice whose model has no position table in the engine's rows."""
    letters = [letter for letter, name in _POSITION_CHOICES.items()
               if not embedding_tables(param_table(load_config(name)))["position"]]
    assert len(letters) == 1, letters
    return letters[0]


def _vocabulary_flops() -> str:
    """01.2: BertModel's forward FLOPs do not depend on V (a lookup is no matmul): "b"."""
    small, big = load_config("bert-base-uncased"), load_config("roberta-base")
    same = all(forward_flops(small, b, s).forward == forward_flops(big, b, s).forward
               for b, s in ((1, 128), (8, 512)))
    return "b" if same else "a"


def _embedding_params(V: int, P: int, T: int, H: int) -> int:
    """Reference solution of 01.4: one row of H numbers per token, per position, per segment."""
    return (V + P + T) * H


def _rows(tables: dict, kind: str) -> int:
    """How many rows a model's table of this kind has (0: the model has no such table)."""
    return tables[kind][0].shape[0] if tables[kind] else 0


def _embedding_cases() -> list[Case]:
    cases = []
    for name in ("bert-base-uncased", "bert-base-chinese", "roberta-base", "bert-large-uncased", "gpt2",
                 "llama-7b"):
        c = load_config(name)
        params = param_table(c)
        tables = embedding_tables(params)
        kwargs = {"V": c["V"], "P": _rows(tables, "position"), "T": _rows(tables, "segment"), "H": c["H"]}
        cases.append(Case(kwargs, total(select(params, component=EMBEDDINGS)), name))
    return cases


register(
    Exercise("01.1", "explain", answer=_no_position_table, choices=("a", "b", "c", "d"),
             hint="a stored table is a tensor in the checkpoint: which of the four could compute its positions "
                  "instead of looking them up?"),
    Exercise("01.2", "explain", answer=_vocabulary_flops, choices=("a", "b", "c", "d"),
             hint="what does BertModel do with the token table: multiply by it, or read one row of it?"),
    Exercise("01.3", "predict", answer=_llama_token_share, tolerance=0.1, unit="%"),
    Exercise("01.4", "code", cases=_embedding_cases, solution=_embedding_params),
)
