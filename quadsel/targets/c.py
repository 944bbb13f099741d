"""§3.2: generate the decision function as nested if/else-if C from a quadtree (Jinja2 template)."""

from .c_common import algorithm_ids, common_context, library_of
from .templating import render


def generate_c(fn, name=None, merge=True, library=None, order="expected"):
    """C source of `int NAME(int comm_size, size_t msg_size, int *segsize)` for a DecisionFunction.

    merge=True: the merged if/else-if (c_branches.py), its tests in `order` ("expected": the fewest expected
    tests on random queries where that beats the tree's order, c_order.py; "tree": the quadtree's); False: the
    paper's one `if` per quadrant. With a known `library` the function returns that library's own algorithm
    ids (algorithm_ids).
    """
    from .c_branches import emit_branches, function_size, ordered_ir, walked_tests
    library = library_of(fn, library)
    ids = algorithm_ids(fn.methods, fn.collective, library)
    ordered = ordered_ir(fn, order) if merge else None      # the order's search runs once
    size = function_size(fn, merge, order, ordered)
    return render("c_decision.c.j2", body=emit_branches(fn, ids, merge, order, ordered), merge=merge, size=size,
                  paper_size=function_size(fn, False) if merge else size,
                  walked=walked_tests(fn, order, ordered) if merge else None,
                  **common_context(fn, name, ids, library))
