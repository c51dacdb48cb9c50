"""Issue 34's rule (experiments/representation_rule.py) on hand-made development records."""
from experiments import representation_rule as rr

SPECIFICITY = {"news_length_groups": 66.0, "equal_length": 100.0, "one_word_explain": 82.0, "shorter_specific": 97.0}
REFERENCE = {"shipped": SPECIFICITY, "sd": {**{m: 1.0 for m in SPECIFICITY}, "stsb_dev_concat": 0.5},
             "mean": {"stsb_dev_concat": 68.0},
             "snli_dev": {"entailment": 72.0, "neutral": 51.0, "n": {"entailment": 139, "neutral": 184}}}


def candidate(**more):
    made = {"vocabulary": 1000, "sts17": 0.75, "stsb_dev_concat": 68.0, **SPECIFICITY, "news_train": 70.0,
            "information_content_news_train": 68.6, "snli_dev": {"entailment": 72.0, "neutral": 51.0}}
    return {**made, **more}


def test_the_ship_rules_floors_stand_beside_issue_34s_own():
    assert rr.floors(candidate(), REFERENCE, 1000) == []
    assert rr.floors(candidate(vocabulary=999, sts17=0.69, stsb_dev_concat=54.9), REFERENCE, 1000)[:3] == [
        "vocabulary 999 < 1000 trained", "STS 2017 0.690 < 0.7", "STS-B dev concat 54.9 < 55.0"]
    # one sd below the shipped model is the floor: 97.0 - 1.0
    assert rr.floors(candidate(shorter_specific=95.9), REFERENCE, 1000) == ["shorter_specific 95.9 < 96.0"]
    assert rr.floors(candidate(news_train=68.6), REFERENCE, 1000) == ["news-train 68.6 <= information content 68.6"]
