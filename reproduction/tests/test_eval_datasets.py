"""Evaluation data loaders on the shared data, data-dir resolution and missing-data errors."""
import numpy as np
import pytest

from probsent.errors import ProbsentError
from reproduction.evaluation import datasets as ds


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


# --- resolution and errors (no shared data needed) ---------------------------------------

def test_explicit_dir_beats_environment(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.setenv(ds.DATA_DIR_ENV, str(tmp_path / "b"))
    assert ds.resolve_data_dir(tmp_path / "a") == tmp_path / "a"
    assert ds.resolve_data_dir() == tmp_path / "b"


def test_default_is_shared_data_beside_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "project").mkdir()
    monkeypatch.delenv(ds.DATA_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path / "project")
    assert ds.resolve_data_dir() == (tmp_path / "shared" / "data").resolve()


def test_missing_explicit_dir_is_a_one_line_error(tmp_path):
    with pytest.raises(ProbsentError) as error:
        ds.resolve_data_dir(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in _one_line(error)


def test_missing_environment_dir_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(ds.DATA_DIR_ENV, str(tmp_path / "gone"))
    with pytest.raises(ProbsentError) as error:
        ds.resolve_data_dir()
    message = _one_line(error)
    assert ds.DATA_DIR_ENV in message and str(tmp_path / "gone") in message


def test_no_default_dir_lists_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.delenv(ds.DATA_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    import probsent.data.development_sets  # the data root is resolved by the product's loaders

    monkeypatch.setattr(probsent.data.development_sets, "_repo_root", lambda: tmp_path / "repo")
    with pytest.raises(ProbsentError) as error:
        ds.resolve_data_dir()
    assert "shared" in _one_line(error) and ds.DATA_DIR_ENV in str(error.value)


def test_missing_file_names_the_file(tmp_path):
    (tmp_path / "specificity" / "news-test").mkdir(parents=True)
    (tmp_path / "specificity" / "news-test" / "tknsents.txt").write_text("a b .\n")
    with pytest.raises(ProbsentError) as error:
        ds.load_news_test(ds.DataDir(tmp_path))
    assert "labels.txt" in _one_line(error)


def test_misaligned_files_are_reported(tmp_path):
    folder = tmp_path / "specificity" / "ko2019"
    folder.mkdir(parents=True)
    (folder / "yelps.txt").write_text("one\ntwo\n")
    (folder / "yelpv.txt").write_text("1.0\n")
    with pytest.raises(ProbsentError) as error:
        ds.load_ko2019(ds.DataDir(tmp_path), "yelp")
    assert "yelpv.txt" in _one_line(error)


def test_lines_split_only_on_newlines(tmp_path):
    (tmp_path / "f.txt").write_bytes("a\u2028b\r\nc\x85d\n".encode())
    assert ds.DataDir(tmp_path).read_lines("f.txt") == ["a\u2028b", "c\x85d"]


# --- the shared files --------------------------------------------------------------------

def test_news_train(eval_data):
    raw = ds.load_news_train(eval_data, pdtb_only=False, drop_test_overlap=False)
    assert len(raw.sentences) == 4342
    assert int(raw.specific.sum()) == 2231  # label 2
    clean = ds.load_news_train(eval_data)
    assert len(clean.sentences) == 2796 - 66
    assert clean.rows.max() < 2796
    assert eval_data.sha256["specificity/news-train/data.txt"].startswith("7a5b7254")


def test_news_test(eval_data):
    test = ds.load_news_test(eval_data)
    assert len(test.sentences) == len(test.speciteller_probs) == 885
    assert int(test.specific.sum()) == 483  # label -1
    assert "\ufffd" in test.sentences[650]  # line 651: broken UTF-8


@pytest.mark.parametrize("domain, rows", [("twitter", 984), ("yelp", 845), ("movie", 920)])
def test_ko2019(eval_data, domain, rows):
    rated = ds.load_ko2019(eval_data, domain)
    assert len(rated.sentences) == len(rated.ratings) == rows
    assert 1.0 <= rated.ratings.min() and rated.ratings.max() <= 5.0


@pytest.mark.parametrize("split, rows", [("train", 5749), ("dev", 1500), ("test", 1379)])
def test_sts_benchmark(eval_data, split, rows):
    pairs = ds.load_sts_benchmark(eval_data, split)
    assert len(pairs.first) == len(pairs.second) == len(pairs.scores) == rows
    assert 0.0 <= pairs.scores.min() and pairs.scores.max() <= 5.0


def test_sts_benchmark_first_test_row(eval_data):
    pairs = ds.load_sts_benchmark(eval_data, "test")
    assert (pairs.first[0], pairs.second[0], pairs.scores[0]) == (
        "A girl is styling her hair.", "A girl is brushing her hair.", 2.5)


def test_sts17(eval_data):
    pairs = ds.load_sts17(eval_data)
    assert len(pairs.scores) == 250
    assert pairs.first[0] == "A person is on a baseball team."


def test_senteval_sts_drops_unscored_pairs(eval_data):
    sizes = {year: {name: len(p.scores) for name, p in ds.load_senteval_sts(eval_data, year).items()}
             for year in ds.SENTEVAL_STS_SETS}
    assert sizes["STS12"]["MSRpar"] == 750
    assert sorted(sizes["STS13"]) == ["FNWN", "OnWN", "headlines"]
    assert sizes["STS15"]["answers-forums"] == 375  # 2000 lines, 1625 unscored
    assert sizes["STS16"] == {"answer-answer": 254, "headlines": 249, "plagiarism": 230,
                              "postediting": 244, "question-question": 209}
    assert sum(len(s) for s in sizes.values()) == 24


def test_snli_test(eval_data):
    snli = ds.load_snli_test(eval_data)
    assert len(snli.premises) == len(snli.hypotheses) == 9824
    assert np.bincount(snli.labels).tolist() == [3368, 3219, 3237]
    # File line 161 is csv-quoted with doubled inner quotes.
    assert snli.premises[159].endswith('a sign that says "HI-POINTE."')
    assert snli.labels[159] == 1


def test_unknown_names_are_errors():
    with pytest.raises(ProbsentError):
        ds.load_ko2019(None, "news")  # type: ignore[arg-type]
    with pytest.raises(ProbsentError):
        ds.load_senteval_sts(None, "STS11")  # type: ignore[arg-type]
