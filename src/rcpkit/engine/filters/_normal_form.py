"""Negation normal form of a filter: ``not`` pushed onto the clauses, same-kind
combinators flattened, single-child combinators dropped.

Every clause is two-valued (a document either satisfies it or not: there is no
SQL-style unknown), so De Morgan's laws hold exactly. Compilers start from this
form: it is the same predicate as the parsed tree with the least nesting, which
matters to engines that bound how deeply a query may nest (SQLite's parser).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias, assert_never

from rcpkit.protocol.filters import And, Clause, Filter, Not, Or

__all__ = ["Atom", "Junction", "Term", "negation_normal_form"]


@dataclass(frozen=True, slots=True)
class Atom:
    """A clause, or its complement when ``negated``."""

    clause: Clause
    negated: bool


@dataclass(frozen=True, slots=True)
class Junction:
    """A conjunction (``conjunctive``) or disjunction of at least two terms, none of
    which is a junction of the same kind."""

    conjunctive: bool
    children: tuple[Term, ...]


Term: TypeAlias = Atom | Junction


def negation_normal_form(filter: Filter, negated: bool = False) -> Term:
    """``filter`` (complemented when ``negated``) in negation normal form."""
    match filter:
        case Clause():
            return Atom(filter, negated)
        case Not(child):
            return negation_normal_form(child, not negated)
        case And(children):
            return _junction(not negated, children, negated)
        case Or(children):
            return _junction(negated, children, negated)
        case _:
            assert_never(filter)


def _junction(conjunctive: bool, children: tuple[Filter, ...], negated: bool) -> Term:
    terms: list[Term] = []
    for child in children:
        term = negation_normal_form(child, negated)
        if isinstance(term, Junction) and term.conjunctive == conjunctive:
            terms.extend(term.children)
        else:
            terms.append(term)
    if len(terms) == 1:
        return terms[0]
    return Junction(conjunctive, tuple(terms))
