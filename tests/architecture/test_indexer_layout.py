"""The indexer's shape: at most a dozen modules directly in lancelot_indexer/, the rest in one folder a stage
(pyproject's `layers` contracts say which stands on which), and no import cycle, between modules or folders."""

from __future__ import annotations

from pathlib import Path

import grimp

import lancelot_indexer

PACKAGE = "lancelot_indexer"
FOLDER = Path(lancelot_indexer.__file__).parent
MOST_AT_THE_TOP = 12


def cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Each import A -> B of the indexer, between modules or between the children of one package (a folder as
    a whole), where B also leads back to A."""
    found = []
    for module in sorted(graph.find_descendants(PACKAGE) | {PACKAGE}):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported.startswith(f"{PACKAGE}.") and graph.chain_exists(importer=imported, imported=module):
                found.append((module, imported))
        children = sorted(graph.find_children(module))
        for child in children:
            for other in children:
                if child < other and (
                    graph.chain_exists(importer=child, imported=other, as_packages=True)
                    and graph.chain_exists(importer=other, imported=child, as_packages=True)
                ):
                    found.append((child, other))
    return found


def test_at_most_a_dozen_modules_sit_directly_in_the_package():
    top = sorted(path.name for path in FOLDER.glob("*.py"))
    assert "cli.py" in top
    assert len(top) <= MOST_AT_THE_TOP, top


def test_every_folder_of_the_package_is_a_package_the_contracts_can_see():
    folders = [path for path in FOLDER.rglob("*") if path.is_dir() and path.name != "__pycache__"]
    assert folders
    assert [str(folder) for folder in folders if not (folder / "__init__.py").is_file()] == []


def test_no_module_or_folder_of_the_indexer_imports_itself_back():
    assert cycles(grimp.build_graph(PACKAGE)) == []


def test_an_import_that_closes_a_circle_is_found():
    graph = grimp.build_graph(PACKAGE)
    # pdf imports the table of formats (for Unreadable); the table importing pdf closes a circle.
    graph.add_import(importer=f"{PACKAGE}.readers.formats", imported=f"{PACKAGE}.readers.pdf")
    # chunking is below the readers; chunking importing a reader closes a circle between the two folders.
    graph.add_import(importer=f"{PACKAGE}.chunking.chunk", imported=f"{PACKAGE}.readers.plain")
    found = cycles(graph)
    assert (f"{PACKAGE}.readers.formats", f"{PACKAGE}.readers.pdf") in found
    assert (f"{PACKAGE}.chunking", f"{PACKAGE}.readers") in found
