"""Tokens and prose for the simulator: a word-level tokenizer and topic-aware sentence generation."""

from __future__ import annotations

import random
import re

__all__ = ["count_tokens", "entities", "keywords", "numbers", "prose", "reasoning_summary", "split_tokens", "stem"]

_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_ENTITY = re.compile(r"\b[A-Z][a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from about as into like through
    after over between out against during without before under around among is are was were be been
    being am do does did doing have has had having i me my we our you your he him his she her it its
    they them their what which who whom this that these those there here can could should would will
    shall may might must please tell give show let make get me us so very just also not no yes how
    why when where some any all each more most other such own same than too now up down again once
    hello hi hey thanks thank ok okay say said reply answer question want need know think""".split()
)

_COMMON_VERBS = frozenset(
    "compare find look check get search write list describe explain summarize summarise call use "
    "fetch book send create add remove delete update convert calculate translate".split()
)

_OPENERS = (
    "Here is a short overview of {topic}.",
    "Let me walk you through {topic}.",
    "Good question about {topic}.",
    "{Topic} is worth looking at from a few angles.",
)
_BODY = (
    "The core idea behind {topic} is easier to see once the details are laid out in order.",
    "Most discussions of {topic} start with its purpose and then move to how it works in practice.",
    "A useful way to think about {topic} is to separate what is known from what is assumed.",
    "People who work with {topic} often point to a handful of recurring patterns.",
    "In practice, {topic} depends on context, so the answer can change with the circumstances.",
    "It helps to compare {topic} with related ideas to see what makes it distinct.",
    "The details of {topic} matter most when you have to make a concrete decision.",
    "There are trade-offs in {topic}, and each choice has costs as well as benefits.",
)
_CLOSERS = (
    "I hope this gives you a clear starting point.",
    "Let me know if you would like more detail on any part of it.",
    "That should cover the main points.",
    "Feel free to ask a follow-up question.",
)


def split_tokens(text: str) -> list[str]:
    """Split text into tokens that concatenate back to it exactly (leading whitespace attached)."""
    return _TOKEN.findall(text)


def count_tokens(text: str) -> int:
    """How many tokens :func:`split_tokens` makes of ``text``: the simulator's one unit of length."""
    return len(split_tokens(text))


def stem(word: str) -> str:
    """A crude stem so that 'cities' matches 'city' and 'forecasts' matches 'forecast'."""
    word = word.lower()
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    return word


def keywords(text: str) -> list[str]:
    """Content words of ``text`` (as first written) in order of appearance, stopwords removed."""
    seen: dict[str, str] = {}
    for word in _WORD.findall(text):
        lowered = word.lower()
        if len(lowered) > 2 and lowered not in STOPWORDS:
            seen.setdefault(lowered, word)
    return list(seen.values())


def entities(text: str) -> list[str]:
    """Capitalised names (``Paris``, ``New York``).

    A lone capitalised word that starts a sentence counts only when nothing else looks like a name
    ("Weather in Oslo" names Oslo; "Paris is lovely" names Paris).
    """
    found: dict[str, None] = {}
    openers: dict[str, None] = {}
    for match in _ENTITY.finditer(text):
        words = match.group(0).split()
        start = match.start()
        sentence_start = start == 0 or text[:start].rstrip()[-1:] in {".", "!", "?", ":", "\n"}
        if sentence_start and words[0].lower() in STOPWORDS | _COMMON_VERBS:
            words = words[1:]
        elif sentence_start and len(words) == 1:
            openers.setdefault(words[0], None)
            continue
        if words:
            found.setdefault(" ".join(words), None)
    return list(found or openers)


def numbers(text: str) -> list[float]:
    """Numbers mentioned in ``text``, in order."""
    return [float(value) for value in _NUMBER.findall(text)]


def prose(prompt: str, rng: random.Random, temperature: float) -> str:
    """A few fluent sentences about the prompt's topic; more varied as ``temperature`` rises."""
    words = keywords(prompt)
    topic = " ".join(words[:3]) if words else "your question"
    variety = max(1, round(len(_BODY) * min(temperature, 2.0) / 2)) if temperature > 0 else 1
    body_count = 2 + rng.randint(0, 2 if temperature > 0 else 0)
    sentences = [rng.choice(_OPENERS[: max(1, variety // 2)])]
    pool = list(_BODY[: max(body_count, variety)])
    if temperature > 0:
        rng.shuffle(pool)
    sentences.extend(pool[:body_count])
    if len(words) > 3:
        sentences.append(f"You also mentioned {', '.join(words[3:6])}, which fit into the same picture.")
    sentences.append(rng.choice(_CLOSERS[: max(1, variety // 2)]))
    text = " ".join(sentences)
    return text.replace("{Topic}", topic[:1].upper() + topic[1:]).replace("{topic}", topic)


_REASONING = (
    "The user is asking about {topic}.",
    "I should work out what matters most here.",
    "Breaking {topic} into parts makes it easier to explain.",
    "I will check the key facts before answering.",
    "A short, clear structure will serve best.",
    "I should mention the main trade-offs.",
    "Examples would make {topic} concrete.",
    "Finally, I will summarise the answer plainly.",
)


def reasoning_summary(prompt: str, words: int, rng: random.Random) -> str:
    """About ``words`` tokens of plausible reasoning summary about the prompt."""
    topic = " ".join(keywords(prompt)[:3]) or "the question"
    sentences: list[str] = []
    while count_tokens(" ".join(sentences)) < words:
        sentences.append(rng.choice(_REASONING).replace("{topic}", topic))
    return "".join(split_tokens(" ".join(sentences))[:words]).strip() if words else ""


def extractive_summary(transcript: str, words_per_line: int = 30) -> str:
    """The simulator's compaction summary: the first sentence of each line of the conversation (up to
    ``words_per_line`` words), speaker kept, so a compacted conversation still carries its facts."""
    kept: list[str] = []
    for line in transcript.splitlines():
        speaker, _, said = line.partition(": ")
        sentence = re.split(r"(?<=[.!?])\s", said or speaker, maxsplit=1)[0]
        words = sentence.split()
        short = " ".join(words[:words_per_line]) + (" ..." if len(words) > words_per_line else "")
        kept.append(f"{speaker}: {short}" if said else short)
    return "\n".join(kept)
