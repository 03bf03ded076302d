"""A few passages of distinct topics, and questions that share no word with the passage that answers them:
only a model that knows meaning finds it (tests of `--embed local`)."""

from __future__ import annotations

DOCS = {
    "car.md": "# Tyres\n\nCheck the tyre pressure every month; under-inflated tyres wear out quickly and waste fuel.\n",
    "bread.md": "# Bread\n\nKnead the dough for ten minutes, let it rise for an hour, then bake it until golden.\n",
    "garden.md": "# Tomatoes\n\nWater tomatoes deeply twice a week in summer; the soil should stay moist.\n",
    "tax.md": "# Returns\n\nFile your income declaration before April; late filers pay a penalty.\n",
}
# Each question, and the document that answers it without sharing a word with it.
QUERIES = [
    ("keeping my automobile's wheels pumped up", "car.md"),
    ("preparing a sourdough loaf", "bread.md"),
    ("irrigating vegetables", "garden.md"),
]
