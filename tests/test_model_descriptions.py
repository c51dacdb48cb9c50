"""Each model type is described once, without torch (issue 42): the torch classes take their
name, label and capabilities from the description, registration refuses a class whose
constructor says otherwise, and the weights a description implies are those the module has."""
from __future__ import annotations

import pytest
import torch

from probsent.model_descriptions import DESCRIPTIONS, ModelDescription
from probsent.model_directory import expected_shapes
from probsent.models import MODEL_TYPES, build_model, register_model
from probsent.models.wlo import WLO


@pytest.mark.parametrize("name", ["wlo", "wordavg", "wordsum", "lstmavg", "lstmgaussian"])
@pytest.mark.parametrize("settings", [{}, {"dim": 3, "hidden": 5}])
def test_the_weights_a_description_implies_are_the_modules(name: str, settings: dict) -> None:
    described = DESCRIPTIONS[name]
    model = {"type": name, "vocab_size": 7, **{k: v for k, v in settings.items() if k in described.settings}}
    with torch.device("meta"):
        module = build_model(model)
    assert {k: tuple(v.shape) for k, v in module.state_dict().items()} == expected_shapes(described, model)
    cls = MODEL_TYPES[name]
    assert (cls.type_name, cls.label, cls.probabilistic) == (described.name, described.label, described.probabilistic)
    assert cls.hyper_parameters() == dict(described.settings)


def test_a_hand_written_shape() -> None:
    lstm = expected_shapes(DESCRIPTIONS["lstmavg"], {"type": "lstmavg", "vocab_size": 10, "dim": 2, "hidden": 3})
    assert lstm["embedding.weight"] == (10, 2) and lstm["lstm.weight_ih_l0"] == (12, 2)
    assert lstm["lstm.weight_hh_l0"] == (12, 3) and lstm["lstm.bias_hh_l0"] == (12,)


def test_registration_refuses_a_constructor_that_is_not_the_description() -> None:
    class Other(WLO):
        description = ModelDescription("other-wlo", "Other", True, 1.0, {"dim": 8}, {"scale.weight": ("vocab_size", "dim")})

    with pytest.raises(TypeError, match="are not the settings of its description"):
        register_model(Other)
    assert "other-wlo" not in MODEL_TYPES and "other-wlo" not in DESCRIPTIONS

    class Undescribed(WLO):
        pass

    with pytest.raises(TypeError, match="must declare its description"):
        register_model(Undescribed)


def test_saving_refuses_weights_that_are_not_the_descriptions(tmp_path) -> None:
    """A plug-in whose description names other weights than its module has cannot write a model
    that no reader could read back: one line at save, nothing written."""
    from probsent.data.vocab import UNKNOWN, Vocabulary
    from probsent.model_directory import write_model_dir
    from probsent.models import unregister_model

    class Misdescribed(WLO):
        description = ModelDescription("misdescribed-wlo", "Misdescribed", True, 1.0, dict(WLO.description.settings),
                                       {"scale.weight": ("vocab_size", "dim")})

    register_model(Misdescribed)
    try:
        with pytest.raises(ValueError, match="not those its description implies"):
            write_model_dir(tmp_path, Misdescribed(2, dim=3), Vocabulary([UNKNOWN, "a"]))
    finally:
        unregister_model("misdescribed-wlo")
    assert not any(tmp_path.iterdir())
