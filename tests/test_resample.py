"""--resample-like: the mixture resampled to a reference's (word overlap x length) shape."""
import numpy as np
import pytest

from probsent.data import resample as rs
from probsent.data.corpus import load_corpus
from probsent.errors import ProbsentError


def test_grid_cells_by_hand():
    # overlap 0.05 -> bin 0, 0.44 -> 4, 1.0 -> 9 (the last bin is closed); mean length 5.5 -> 0,
    # 10 -> 2 (9 <= 10 < 12), 40 -> 6
    cells = rs.grid_cells(np.array([0.05, 0.44, 1.0]), np.array([5.5, 10.0, 40.0]))
    assert cells.tolist() == [0 * 7 + 0, 4 * 7 + 2, 9 * 7 + 6]


def test_resample_takes_the_reference_share_of_each_cell_or_all_it_has():
    cells = np.array([0] * 10 + [1] * 2 + [2] * 5)
    reference = np.array([0, 1, 1, 1])  # shares: cell 0 1/4, cell 1 3/4, cell 2 none
    rows = rs.resample_like(cells, reference, size=8)
    taken = np.bincount(cells[rows], minlength=3).tolist()
    assert taken == [2, 2, 0]  # cell 0: 8/4 = 2 of 10; cell 1 asks 6 and has 2
    assert rows.tolist() == [0, 9, 10, 11]  # evenly spaced over cell 0 (its first and last), ascending


def test_total_variation_by_hand():
    assert rs.total_variation(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])) == pytest.approx(0.25)
    assert rs.total_variation(np.array([3, 3]), np.array([3])) == 0.0


def test_reference_in_the_paranmt_sample_layout(tmp_path):
    (tmp_path / rs.PARANMT_SIDES[0]).write_text("a b c .\nx y\n", encoding="utf-8")
    (tmp_path / rs.PARANMT_SIDES[1]).write_text("a b d .\nx y\n", encoding="utf-8")
    (tmp_path / "para_tiny.txt").write_text("one two\tone three\n", encoding="utf-8")
    assert rs.reference_pair_lines(tmp_path) == ["a b c .\ta b d .", "x y\tx y", "one two\tone three"]
    # overlaps 3/5, 1, 1/3; mean lengths 4, 2, 2
    assert rs.reference_cells(tmp_path).tolist() == [6 * 7, 9 * 7, 3 * 7]
    (tmp_path / rs.PARANMT_SIDES[1]).write_text("a b d .\n", encoding="utf-8")
    with pytest.raises(ProbsentError, match="has 2 lines"):
        rs.reference_pair_lines(tmp_path)
    with pytest.raises(ProbsentError, match="no such file"):
        rs.reference_pair_lines(tmp_path / "missing")


def test_resampled_corpus_keeps_the_chosen_pairs_and_reports_the_shape(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    # four close short pairs and four loose long ones; the reference is all close and short
    close = ["the cat sat\tthe cat sat down"] * 4
    loose = ["a man rides a red bike on the long road today\tsomeone is outside in the sun with friends now"] * 4
    pairs.write_text("\n".join(close + loose) + "\n", encoding="utf-8")
    reference = tmp_path / "ref.tsv"
    reference.write_text("the dog ran\tthe dog ran off\n", encoding="utf-8")
    corpus = load_corpus(pairs, cache_dir=tmp_path / "cache")
    messages = []
    chosen = rs.resampled_like(corpus, reference, 3, 100, messages.append)
    assert chosen.num_pairs == 3 and set(chosen.words) == {"the", "cat", "sat", "down"}
    mixture = chosen.report["mixture"]
    assert mixture["shape_distance_before"] == pytest.approx(0.5) and mixture["shape_distance_after"] == 0.0
    assert "3 of 8 pairs" in messages[0]
