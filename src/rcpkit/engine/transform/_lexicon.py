"""Closed-class English words the structural transforms (decompose, step-back) look for."""

from __future__ import annotations

from typing import Final

__all__ = [
    "ARTICLES",
    "ATTACHING",
    "AUXILIARIES",
    "BOUNDARIES",
    "COORDINATORS",
    "COPULAS",
    "MONTHS",
    "NUMBER_WORDS",
    "PREPOSITIONS",
    "PRONOUNS",
    "SUFFIX_STARTERS",
    "SUPERLATIVES",
    "UNITS",
    "WH_WORDS",
    "WEEKDAYS",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


WH_WORDS: Final = _words("what how why when where who whom whose which")
AUXILIARIES: Final = _words(
    "is are was were be been being am do does did can could should would will shall "
    "may might must has have had"
)
COPULAS: Final = _words("is are was were")
PREPOSITIONS: Final = _words(
    "of for in on at from to with within without by about across during under over between "
    "among against into onto through via per than regarding versus vs after before since "
    "until near off like as around toward towards beyond"
)
COORDINATORS: Final = _words("and or nor but")
ARTICLES: Final = _words("the a an")
PRONOUNS: Final = _words("it its they them their")
#: Prepositions that can carry a modifier shared by every item of a list before them.
ATTACHING: Final = _words("of for in on at from about across during within regarding with under")
#: Words that end the head noun phrase of a comparison side and start its shared predicate.
SUFFIX_STARTERS: Final = ATTACHING - {"of"} | _words("when while if because to by over")
#: A word of the query grammar rather than of its topic.
BOUNDARIES: Final = WH_WORDS | AUXILIARIES | PREPOSITIONS | COORDINATORS | _words("not no")
SUPERLATIVES: Final = _words(
    "best worst most least latest newest oldest biggest largest smallest fastest slowest "
    "highest lowest greatest longest shortest cheapest top"
)
MONTHS: Final = _words(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
#: Spelled-out numbers ("one" is left out: it is as often a pronoun).
NUMBER_WORDS: Final = _words(
    "two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred hundreds thousand thousands million millions billion billions trillion dozen dozens"
)
WEEKDAYS: Final = _words("monday tuesday wednesday thursday friday saturday sunday")
#: Units a number may be followed by in a quantity ("5 K", "10 years", "3 GB").
UNITS: Final = _words(
    "k c f ms s sec secs second seconds min mins minute minutes h hr hrs hour hours day days "
    "week weeks month months year years decade decades century centuries percent percentage "
    "degree degrees kelvin celsius fahrenheit m cm mm km meter meters metre metres mile miles "
    "g kg mg gram grams kilogram kilograms lb lbs pound pounds ton tons tonnes b kb mb gb tb "
    "byte bytes kilobytes megabytes gigabytes terabytes hz khz mhz ghz w kw mw v mv a ma "
    "dollar dollars euro euros usd eur times x"
)
