"""What one Rust source file declares and names, for check_layout.py: its
`mod` declarations, the paths of its `use` declarations, and the `crate::`,
`super::`, `self::` and child-module paths in its code. Comments and the
contents of literals are blanked first; items under `#[cfg(test)]` are kept
apart (a test `mod x;`) or skipped (any other item, `mod tests { .. }` included).
"""

import re
from dataclasses import dataclass, field

_RAW_STRING = re.compile(r'[bc]?r(#*)"')
_TOKEN = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*|\d\w*|::|\S")
_IDENT = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_]*$")
# Keywords that may start a path in code or a `use` tree.
PATH_STARTS = {"crate", "$crate", "super", "self"}


@dataclass
class ModDecl:
    """`mod name;` (a file) or `mod name { .. }` (inline) inside `scope`."""

    scope: tuple
    name: str
    line: int
    inline: bool
    test: bool = False
    path_attr: str | None = None


@dataclass
class PathRef:
    """A path as written (`super::pump::Pump`), inside inline modules `scope`."""

    scope: tuple
    segments: list
    line: int
    alias: str = ""
    is_use: bool = False
    is_pub: bool = False


@dataclass
class Source:
    mods: list = field(default_factory=list)
    paths: list = field(default_factory=list)
    path_attrs: list = field(default_factory=list)  # lines with #[path = ..]
    file_test: bool = False  # #![cfg(test)]
    # How often each identifier appears in the code (not in comments or literals).
    identifiers: dict = field(default_factory=dict)


def _blank(text):
    return "".join(c if c == "\n" else " " for c in text)


def _literal_end(text, i):
    """Where the literal starting at text[i] (a quote, raw string or char) ends,
    or None for a lifetime or a lone quote."""
    raw = _RAW_STRING.match(text, i)
    if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        end = text.find('"' + raw.group(1), raw.end())
        return len(text) if end < 0 else end + 1 + len(raw.group(1))
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    if text[i] == "'":
        if text.startswith("\\", i + 1):
            end = text.find("'", i + 3)
            return None if end < 0 else end + 1
        if text.startswith("'", i + 2):
            return i + 3
    return None


def strip(text):
    """(text without comments, text without comments and literal contents),
    both of the same length and lines as `text`."""
    no_comments, code = [], []
    i = 0
    while i < len(text):
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            no_comments.append(_blank(text[i:end]))
            code.append(_blank(text[i:end]))
            i = end
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < len(text) and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            no_comments.append(_blank(text[i:j]))
            code.append(_blank(text[i:j]))
            i = j
            continue
        end = _literal_end(text, i) if text[i] in "\"'bcr" else None
        if end is not None:
            no_comments.append(text[i:end])
            code.append('"' + _blank(text[i + 1 : end - 1]) + '"')
            i = end
            continue
        no_comments.append(text[i])
        code.append(text[i])
        i += 1
    return "".join(no_comments), "".join(code)


def _is_ident(token):
    return bool(_IDENT.match(token))


def _is_cfg_test(attr):
    """`cfg(test)` or `cfg(all(test, ..))`: code that only tests compile."""
    return attr[:2] == ["cfg", "("] and "test" in attr and "not" not in attr and "any" not in attr


class _Scanner:
    def __init__(self, text):
        self.no_comments, code = strip(text)
        self.source = Source()
        self.tokens, self.offsets = [], []
        for match in _TOKEN.finditer(code):
            self.tokens.append(match.group())
            self.offsets.append(match.start())
        self.source.identifiers = {}
        for token in self.tokens:
            if _is_ident(token):
                self.source.identifiers[token] = self.source.identifiers.get(token, 0) + 1
        self.lines = [0] + [m.start() for m in re.finditer("\n", code)]
        self.scopes = []  # one entry per open brace: a module name or None

    def tok(self, i):
        return self.tokens[i] if 0 <= i < len(self.tokens) else ""

    def line(self, i):
        offset = self.offsets[i] if i < len(self.offsets) else len(self.no_comments)
        low, high = 0, len(self.lines)
        while low + 1 < high:
            mid = (low + high) // 2
            low, high = (mid, high) if self.lines[mid] < offset else (low, mid)
        return low + 1

    def scope(self):
        return tuple(s for s in self.scopes if s is not None)

    def matching(self, i, open_, close):
        """The index of the token closing the bracket at i."""
        depth = 0
        for j in range(i, len(self.tokens)):
            if self.tokens[j] == open_:
                depth += 1
            elif self.tokens[j] == close:
                depth -= 1
                if depth == 0:
                    return j
        return len(self.tokens)

    def skip_item(self, i):
        """The index after the item starting at i (ends at `;` or `,`, after its
        first `{ .. }`, or before a bracket it did not open)."""
        depth = 0
        while i < len(self.tokens):
            t = self.tokens[i]
            if t in "([":
                depth += 1
            elif t in ")]}":
                if depth == 0:
                    return i
                depth -= 1
            elif t == "{" and depth == 0:
                return self.matching(i, "{", "}") + 1
            elif t in ";," and depth == 0:
                return i + 1
            i += 1
        return i

    def after_visibility(self, i):
        if self.tok(i) == "pub":
            return self.matching(i + 1, "(", ")") + 1 if self.tok(i + 1) == "(" else i + 1
        return i

    def attribute(self, i, pending):
        """Reads the attribute at i (`#[..]` or `#![..]`); returns the index after it."""
        inner = self.tok(i + 1) == "!"
        start = i + 2 if inner else i + 1
        end = self.matching(start, "[", "]")
        attr = self.tokens[start + 1 : end]
        if _is_cfg_test(attr):
            if inner and not self.scopes:
                self.source.file_test = True
            elif not inner:
                pending["test"] = True
        if attr[:1] == ["path"]:
            self.source.path_attrs.append(self.line(i))
            if self.tok(start + 3) == '"':
                quote = self.offsets[start + 3]
                pending["path"] = self.no_comments[quote + 1 : self.no_comments.find('"', quote + 1)]
        return end + 1

    def mod_decl(self, i, pending):
        """`mod name;` or `mod name {` at i (the `mod` token)."""
        name, after = self.tok(i + 1), self.tok(i + 2)
        inline = after == "{"
        self.source.mods.append(
            ModDecl(self.scope(), name, self.line(i), inline, pending.get("test", False),
                    pending.get("path"))
        )
        if inline:
            self.scopes.append(name)
        return i + 3

    def use_tree(self, i, prefix, found):
        """Reads the use tree at i into `found` [(segments, alias)]; returns the index after it."""
        segments = list(prefix)
        while i < len(self.tokens):
            t = self.tokens[i]
            if t == "::":
                i += 1
            elif t == "{":
                i += 1
                while i < len(self.tokens) and self.tokens[i] != "}":
                    j = self.use_tree(i, segments, found)
                    i = j + 1 if self.tok(j) == "," or j == i else j
                return i + 1
            elif t == "*":
                found.append((segments + ["*"], "*"))
                return i + 1
            elif _is_ident(t):
                segments.append(t)
                i += 1
                if self.tok(i) == "::":
                    continue
                alias = segments[-2] if t == "self" and len(segments) > 1 else t
                if self.tok(i) == "as":
                    alias, i = self.tok(i + 1), i + 2
                found.append((segments, alias))
                return i
            else:
                return i
        return i

    def use_decl(self, i):
        """`use ..;` at i (the `use` token)."""
        before = self.tok(i - 1)
        is_pub = before == "pub" or (before == ")" and "pub" in self.tokens[max(0, i - 6) : i])
        found = []
        end = self.use_tree(i + 1, [], found)
        line = self.line(i)
        for segments, alias in found:
            self.source.paths.append(PathRef(self.scope(), segments, line, alias, True, is_pub))
        while end < len(self.tokens) and self.tokens[end] != ";":
            end += 1
        return end + 1

    def code_path(self, i):
        """The path starting at i in code (`crate::a::B`, `child::f`)."""
        segments = [self.tokens[i]]
        j = i + 1
        while self.tok(j) == "::" and _is_ident(self.tok(j + 1)):
            segments.append(self.tok(j + 1))
            j += 2
        self.source.paths.append(PathRef(self.scope(), segments, self.line(i), segments[-1]))
        return j

    def run(self):
        """One walk over the tokens: attributes (`pending` for the next item),
        `mod` declarations, `use` trees, paths in code, and the braces that
        open and close inline modules."""
        i, pending = 0, {}
        while i < len(self.tokens):
            t = self.tokens[i]
            if t == "#" and self.tok(i + 1) in ("[", "!"):
                i = self.attribute(i, pending)
                continue
            if pending.get("test"):
                j = self.after_visibility(i)
                if self.tok(j) == "mod" and self.tok(j + 2) == ";":
                    i = self.mod_decl(j, pending)
                else:
                    i = self.skip_item(i)
                pending = {}
                continue
            j = self.after_visibility(i)
            if self.tok(j) == "mod" and _is_ident(self.tok(j + 1)) and self.tok(j + 2) in (";", "{"):
                i, pending = self.mod_decl(j, pending), {}
                continue
            pending = {}
            if t == "use":
                i = self.use_decl(i)
                continue
            if t == "{":
                self.scopes.append(None)
            elif t == "}":
                if self.scopes:
                    self.scopes.pop()
            elif (
                _is_ident(t)
                and self.tok(i + 1) == "::"
                and self.tok(i - 1) not in ("::", ".")
                and not (self.tok(i - 1) == "in" and self.tok(i - 2) == "(")
            ):
                i = self.code_path(i)
                continue
            i += 1
        return self.source


def scan(text):
    """The declarations and paths of one Rust source file's text."""
    return _Scanner(text).run()
