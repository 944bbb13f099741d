"""Per-method analytical models of a collective's time, fitted on measurements and used to predict the decision
map where it was not measured (Nuriyev, Rico-Gallego and Lastovetsky, *Model-based selection of optimal MPI
broadcast algorithms for multi-core clusters*, 2022; docs/methodology.md, *Model-based build*).

Between the decision map and the tree builders: `forms.py` the model of each method (the paper's stage counts
where the paper models the algorithm, a Hockney-style form otherwise), `fit.py` the robust fit, `predict.py`
the predicted decision map with its predicted points marked. It imports decision.decision_map (the map as a
data structure) and nothing downstream of it.
"""

MODEL_FORMS = ("hockney", "paper")
