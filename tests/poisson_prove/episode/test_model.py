"""An episode's fields as a rollout returns them: numbers NumPy gives are valid, bools are not."""

from __future__ import annotations

import pytest


def test_numpy_numbers_are_valid_times_and_bools_are_not() -> None:
    import numpy as np

    from poisson_prove.episode.model import Episode, InvalidEpisode, validate_episode

    ok = validate_episode(Episode("done", np.int64(3), np.float32(20.0)), {"done"})
    assert float(ok.t) == 3.0
    for bad_t in (True, np.bool_(True), "3", float("nan")):
        with pytest.raises(InvalidEpisode):
            validate_episode(Episode("done", bad_t, 20), {"done"})
    with pytest.raises(InvalidEpisode):
        validate_episode(Episode("done", 21, np.int64(20)), {"done"})
