"""helpers.lessons.scaling: BERT-shaped configs of growing width and the components' shares."""

from __future__ import annotations

import pytest

from helpers import count_model, load_config
from helpers.lessons.scaling import scaled_bert, shares_by_width


@pytest.mark.parametrize(("H", "L", "name"), [(768, 12, "bert-base-uncased"), (1024, 24, "bert-large-uncased")])
def test_scaled_bert_reproduces_the_published_shapes(H, L, name):
    scaled, shipped = count_model(scaled_bert(H, L=L)), count_model(load_config(name))
    assert scaled.params == shipped.params
    assert scaled.total == shipped.total


def test_shares_are_exact_and_sum_to_one():
    widths = [128, 768, 4096]
    shares = shares_by_width(widths)
    assert list(shares) == ["embeddings", "attention", "feed-forward", "layer norm", "pooler"]
    for i in range(len(widths)):
        assert sum(s[i] for s in shares.values()) == 1
    embeddings, feed_forward = shares["embeddings"], shares["feed-forward"]
    assert embeddings == sorted(embeddings, reverse=True)
    assert feed_forward == sorted(feed_forward)


def test_width_must_split_into_heads_of_64():
    with pytest.raises(ValueError, match="not a multiple of the head size 64"):
        scaled_bert(100)
