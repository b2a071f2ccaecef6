"""The four MCP prompts, fixed in code (SPEC R7.35-R7.40, R12.10).

A prompt's text reaches the client's model, and ``groove.toml`` can be discovered beside a KB, so no
configuration may change it: the texts live here and nowhere else. Each prompt expands to one
user-role text message ending with the shared citation rules (R7.36). Names are stable; wording is
not.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping

import attrs

CITATION_RULES = """\
Citation rules:
- Cite the `path` of every document you use.
- Read a document with `get_document` before relying on it or mentioning it; a search hit is only an excerpt \
(pass `from_line`/`to_line` around the hit's `location` to read just that part).
- When a search answers with `low_confidence: true`, say that the knowledge base may not cover the \
question instead of answering through it.
- When the knowledge base is silent on something, say so; do not fill the gap from general knowledge."""


class PromptArgumentError(Exception):
    """A missing required argument or an unknown prompt: the server answers invalid-params (R7.35)."""


@attrs.frozen
class PromptArg:
    name: str
    description: str
    required: bool = False


@attrs.frozen
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArg, ...]
    body: Callable[[Mapping[str, str], dt.date], str]


def _summarize_topic(args: Mapping[str, str], today: dt.date) -> str:
    topic = args["topic"]
    return f"""\
Summarize what the knowledge base says about the topic "{topic}".

1. Call `list_topics` and confirm that "{topic}" exists as a topic (or category). If it does not, \
say so and offer the closest topics instead of guessing.
2. Gather the topic with `search` (pass `topic: "{topic}"` and a `limit` of about 15), using a few \
queries that cover its main aspects.
3. Read the documents that carry weight in full with `get_document`.
4. Summarize what the knowledge base establishes, where its sources disagree (name both sides and \
their paths), and what it does not cover."""


def _deep_dive(args: Mapping[str, str], today: dt.date) -> str:
    question = args["question"]
    return f"""\
Research this question in depth using the knowledge base: {question}

Do not answer from the first search.
1. `search` for the question.
2. Expand the top one or two hits with `get_connection_graph` (`start`: the hit's path, `depth: 2`) to \
find related documents that the question's words did not reach.
3. Read the documents that matter in full with `get_document`.
4. `search` again with the vocabulary that turned up, and repeat while new relevant documents appear.
5. Answer, showing which document supports each point."""


def _whats_new(args: Mapping[str, str], today: dt.date) -> str:
    since = args.get("since") or (today - dt.timedelta(days=30)).isoformat()
    return f"""\
Survey what is new in the knowledge base since {since}.

1. Run several `search` calls with different queries, each with `date_from: "{since}"` and a `limit` of \
about 15 (each hit is a short snippet; search again with new words rather than raising the limit); make at \
least one pass with `include_low_quality: true` so short notes are not missed.
2. Group what you find by topic and category (see `list_topics`).
3. Read each document you report with `get_document`.
4. Present the survey as approximate, and say why: `date_from` filters the frontmatter `date` that an \
author wrote, not file modification times, so undated or back-dated documents are missed. It is also \
compared as a plain string, so a value that is not `YYYY-MM-DD` silently drops every document instead \
of causing an error."""


def _find_gaps(args: Mapping[str, str], today: dt.date) -> str:
    topic = args.get("topic")
    scope = f'the topic "{topic}"' if topic else "the knowledge base"
    topic_rule = f' Pass `topic: "{topic}"` on every search.' if topic else ""
    return f"""\
Find the gaps in {scope}: questions a reader would expect it to answer that it does not.

1. Start from `list_topics` to see what {scope} covers.
2. Write down the questions a reader would expect answered, and run one `search` for each.{topic_rule}
3. Treat these as signals, in this order: empty results (note that `low_confidence` is false when \
there are no hits), `low_confidence: true`, and hits that are only loosely related.
4. Search with `include_low_quality: true` to find stubs that exist but say little.
5. Read the closest documents with `get_document` before calling anything a gap.
6. Report the absences, each with the question it leaves open. Do not propose or write content."""


PROMPTS: dict[str, PromptSpec] = {
    spec.name: spec
    for spec in (
        PromptSpec(
            "summarize_topic",
            "Summarize a topic",
            "Summarize what the knowledge base establishes about a topic, where sources "
            "disagree, and what it does not cover.",
            (PromptArg("topic", "A topic as list_topics names it.", required=True),),
            _summarize_topic,
        ),
        PromptSpec(
            "deep_dive",
            "Deep dive",
            "Research a question across the knowledge base: search, follow connections, read, search again.",
            (PromptArg("question", "The question to research.", required=True),),
            _deep_dive,
        ),
        PromptSpec(
            "whats_new",
            "What's new",
            "Survey documents dated on or after a date (frontmatter dates, so approximate).",
            (PromptArg("since", "YYYY-MM-DD; defaults to 30 days before today."),),
            _whats_new,
        ),
        PromptSpec(
            "find_gaps",
            "Find gaps",
            "Find the questions the knowledge base (or one topic) leaves unanswered.",
            (PromptArg("topic", "Limit the survey to this topic."),),
            _find_gaps,
        ),
    )
}


def render_prompt(name: str, arguments: Mapping[str, str] | None, *, today: dt.date | None = None) -> str:
    """The one user message of prompt ``name``, citation rules appended (R7.36).

    ``today`` defaults to the server's current local date (R7.39).

    Raises:
        PromptArgumentError: the prompt does not exist, or a required argument is missing or empty.
    """
    spec = PROMPTS.get(name)
    if spec is None:
        raise PromptArgumentError(f"Unknown prompt: {name}")
    args = {key: value for key, value in (arguments or {}).items() if value is not None}
    for arg in spec.arguments:
        if arg.required and not str(args.get(arg.name, "")).strip():
            raise PromptArgumentError(f'prompt {name}: missing required argument "{arg.name}"')
    return f"{spec.body(args, today or dt.date.today())}\n\n{CITATION_RULES}"
