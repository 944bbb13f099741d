"""The C of a decision function with the layout key: `int NAME(int comm_size, int ppn, size_t msg_size, int *segsize)`
dispatching by ranks per node to one static function per layer, each the if/else-if of its size tree (c.py's
emitter, c_branches.py). One id table for the whole function: a #define is emitted once however many layers use it."""

from ..decision.decision_map import Method
from ..errors import QuadselError
from .c_common import algorithm_ids, common_context, id_legend, library_of
from .escape import comment_text
from .templating import render


def generate_c_forest(function, name=None, merge=True, library=None, order="expected"):
    """C source of a decision function with the layout key (docs/formats-tree.md, Layout forest)."""
    from .c_branches import emit_branches, function_size, ordered_ir
    libraries = {library_of(layer.tree, library) for layer in function.layers}
    if len(libraries) != 1:
        raise QuadselError(f"the {function.collective} forest's layouts were built from different MPI libraries' "
                           "measurements")
    library = libraries.pop()
    methods = [Method(a) for a in dict.fromkeys(m.algorithm for m in function.methods)]
    ids = algorithm_ids(methods, function.collective, library)
    context = common_context(function.layers[0].tree, name, ids, library)
    context["id_legend"] = id_legend(ids, library, function.collective)
    members, last = [], len(function.layers) - 1
    for i, layer in enumerate(function.layers):
        fn = layer.tree
        ordered = ordered_ir(fn, order) if merge else None
        size = function_size(fn, merge, order, ordered)
        stats = fn.stats()
        members.append({
            "function": f"{context['name']}_ppn{layer.ppn}" if i < last else f"{context['name']}_last",
            "ppn": layer.ppn, "label": function.layer_label(i),
            "measured": comment_text(f"measured ppn {', '.join(map(str, layer.measured_ppn))} on "
                                     f"{', '.join(map(str, layer.nodes))} nodes; comm sizes "
                                     f"{int(fn.comm_sizes[0])}-{int(fn.comm_sizes[-1])}, message sizes "
                                     f"{int(fn.msg_sizes[0])}-{int(fn.msg_sizes[-1])} bytes"),
            "leaves": stats["leaves"], "tests": size.tests, "constraint": comment_text(fn.constraint),
            "body": emit_branches(fn, ids, merge, order, ordered), "merge": merge})
    return render("c_forest.c.j2", members=members, total_leaves=function.stats()["leaves"], **context)
