"""The analytical-model comparator: per method a Hockney-style model T = c + a·L(P, m) + b·B(P, m) fitted on all the
measured points (quadsel.models, after the model-based selector of Nuriyev et al. 2022); it picks the method of
least predicted time (quadsel.evaluate.comparators for the selector interface). `quadsel build --model` builds a
tree from the same models fitted on a sparse measurement instead (quadsel.models.predict)."""

from dataclasses import dataclass, field
from typing import List

import numpy as np

from ..models.fit import MethodModel, fit_methods
from .comparators import Selector


@dataclass
class ModelSelector(Selector):
    collective: str = ""
    models: List[MethodModel] = field(default_factory=list)

    kind = "model"

    @classmethod
    def fit(cls, dmap, form="hockney"):
        """Fit every method on its own measured points (models.fit); a method too sparse to fit is left out."""
        models = fit_methods(dmap, form)
        if all(m.params is None for m in models):
            raise ValueError("no method has enough measured points to fit a model")
        return cls(list(dmap.methods), dmap.collective, models)

    @property
    def constraint(self):
        return "hockney fit"

    @property
    def size(self):
        return sum(len(m.params) for m in self.models if m.params is not None)

    def predicted_times(self, comm_sizes, msg_sizes):
        """(N, K) predicted µs of every method (inf for methods without a fit)."""
        comm_sizes, msg_sizes = np.ravel(comm_sizes), np.ravel(msg_sizes)
        out = np.full((comm_sizes.size, len(self.models)), np.inf)
        for k, model in enumerate(self.models):
            if model.params is not None:
                out[:, k] = model.predict(comm_sizes, msg_sizes)
        return out

    def predict(self, comm_sizes, msg_sizes):
        shape = np.shape(comm_sizes)
        return np.argmin(self.predicted_times(comm_sizes, msg_sizes), axis=1).astype(np.int64).reshape(shape)

    def to_json(self):
        return [m.to_json() for m in self.models]


