"""No two modules of the workbench import each other, directly or around a circle, at run time (imports made
only for type checking do not count: they never run). A circle makes the import order decide what works, and
hides which module is the lower layer."""

from __future__ import annotations

import grimp

KNOWN: set[frozenset[str]] = set()  # none; an entry here would be a circle tolerated for now


def _circles(graph: "grimp.ImportGraph") -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, with its own stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))
    return found


def test_no_import_circle() -> None:
    graph = grimp.build_graph("workbench", exclude_type_checking_imports=True, cache_dir=None)  # no cache: it may hold an older tree
    circles = set(_circles(graph))
    assert circles - KNOWN == set(), f"modules that import each other: {[sorted(c) for c in circles - KNOWN]}"
    assert KNOWN - circles == set(), f"gone, so take them out of KNOWN: {[sorted(c) for c in KNOWN - circles]}"


def test_no_import_circle_even_through_imports_for_type_checking() -> None:
    """A module that needs another's type only to annotate names it through a Protocol of what it uses (as the
    undo commands name the document state, and the page registry the window), not by importing the module that
    imports it: the layers then read the same to a type checker as at run time."""
    graph = grimp.build_graph("workbench", exclude_type_checking_imports=False, cache_dir=None)
    circles = _circles(graph)
    assert circles == [], f"modules that import each other for type checking: {[sorted(c) for c in circles]}"


def test_the_circle_finder_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert _circles(graph) == [frozenset({"p.a", "p.b"})]
