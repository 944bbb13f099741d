"""The C of a layout forest (decision/layouts.py): `int NAME(int comm_size, int ppn, size_t msg_size, int *segsize)`
dispatching by ranks per node to one static function per member, each the if/else-if of its 2-D tree (c.py's
emitter, c_branches.py). One id table for the whole forest: a #define is emitted once however many members use it."""

from ..decision.decision_map import Method
from ..errors import QuadselError
from .c_common import algorithm_ids, common_context, id_legend, library_of
from .escape import comment_text
from .templating import render


def generate_c_forest(forest, name=None, merge=True, library=None, order="expected"):
    """C source of the forest's decision function (docs/formats-tree.md, Layout forest)."""
    from ..decision.layouts import member_label
    from .c_branches import emit_branches, function_size, ordered_ir
    libraries = {library_of(m.fn, library) for m in forest.members}
    if len(libraries) != 1:
        raise QuadselError(f"the {forest.collective} forest's layouts were built from different MPI libraries' "
                           "measurements")
    library = libraries.pop()
    methods = [Method(a) for a in dict.fromkeys(m.algorithm for member in forest.members for m in member.fn.methods)]
    ids = algorithm_ids(methods, forest.collective, library)
    context = common_context(forest.members[0].fn, name, ids, library)
    context["id_legend"] = id_legend(ids, library, forest.collective)
    members = []
    for i, member in enumerate(forest.members):
        fn = member.fn
        ordered = ordered_ir(fn, order) if merge else None
        size = function_size(fn, merge, order, ordered)
        stats = fn.stats()
        members.append({
            "function": f"{context['name']}_ppn{member.ppn}" if i + 1 < len(forest.members) else f"{context['name']}_last",
            "ppn": member.ppn, "label": member_label(forest.members, i),
            "measured": comment_text(f"measured ppn {', '.join(map(str, member.measured_ppn))} on "
                                     f"{', '.join(map(str, member.nodes))} nodes; comm sizes "
                                     f"{int(fn.comm_sizes[0])}-{int(fn.comm_sizes[-1])}, message sizes "
                                     f"{int(fn.msg_sizes[0])}-{int(fn.msg_sizes[-1])} bytes"),
            "leaves": stats["leaves"], "tests": size.tests, "constraint": comment_text(fn.constraint),
            "body": emit_branches(fn, ids, merge, order, ordered), "merge": merge})
    return render("c_forest.c.j2", members=members, total_leaves=forest.stats()["leaves"], **context)
