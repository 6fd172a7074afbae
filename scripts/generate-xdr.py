#!/usr/bin/env python3
"""Generates keystore's strict XDR decoder for Stellar transaction envelopes from an XDR definition file.

Usage: python3 scripts/generate-xdr.py xdr/Stellar-current.x > Sources/StellarTransactions/XDR.generated.swift

Only the types reachable from TransactionEnvelope are generated, each as a Swift type nested in `XDR` with an
`init(xdr:)` that reads it through `XDRReader` (Sources/StellarTransactions/XDRReader.swift), which
enforces the rules of RFC 4506 strictly: every length within its declared maximum, zero padding, bools 0 or 1,
known enum values and union arms only, and a nesting depth limit. A protocol upgrade is a new
xdr/Stellar-current.x (scripts/extract-xdr.py) and a run of this script, not a rewrite.
"""
import re, sys

ROOT = "TransactionEnvelope"
SWIFT_KEYWORDS = {"default", "in", "is", "operator", "return", "func", "self", "Type", "protocol", "extension",
                  "where", "case", "switch", "init", "deinit", "subscript", "import", "static", "struct", "enum",
                  "class", "var", "let", "if", "else", "for", "while", "do", "repeat", "break", "continue", "true",
                  "false", "nil", "throw", "throws", "try", "catch", "as", "Any", "inout", "internal", "public",
                  "private", "fileprivate", "open", "guard", "defer", "fallthrough", "typealias", "associatedtype"}


def tokenize(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.findall(r"0x[0-9A-Fa-f]+|-?\d+|\w+|[{}()\[\]<>;:,=*]", text)


class Parser:
    def __init__(self, tokens):
        self.tokens, self.i = tokens, 0

    def peek(self, k=0):
        return self.tokens[self.i + k] if self.i + k < len(self.tokens) else None

    def take(self, expected=None):
        token = self.tokens[self.i]
        if expected is not None and token != expected:
            raise SyntaxError(f"expected {expected!r}, found {token!r} near {self.tokens[self.i - 5:self.i + 5]}")
        self.i += 1
        return token

    def type_spec(self):
        """A type specifier: primitive, named, or an anonymous struct/union/enum body."""
        token = self.take()
        if token == "unsigned":
            return ("prim", "unsigned " + self.take())
        if token in ("int", "hyper", "bool", "opaque", "string", "void", "float", "double"):
            return ("prim", token)
        if token == "struct" and self.peek() == "{":
            return ("struct", self.struct_body())
        if token == "union" and self.peek() == "switch":
            return ("union", self.union_body())
        if token == "enum" and self.peek() == "{":
            return ("enum", self.enum_body())
        return ("named", token)

    def declaration(self):
        """`type name`, `type name[n]`, `type name<n>`, `type *name`, or `void`."""
        spec = self.type_spec()
        if spec == ("prim", "void"):
            return None
        optional = False
        if self.peek() == "*":
            self.take()
            optional = True
        name = self.take()
        array = None
        if self.peek() == "[":
            self.take()
            array = ("fixed", self.take())
            self.take("]")
        elif self.peek() == "<":
            self.take()
            bound = None if self.peek() == ">" else self.take()
            self.take(">")
            array = ("variable", bound)
        return {"name": name, "spec": spec, "optional": optional, "array": array}

    def struct_body(self):
        self.take("{")
        fields = []
        while self.peek() != "}":
            fields.append(self.declaration())
            self.take(";")
        self.take("}")
        return fields

    def enum_body(self):
        self.take("{")
        values = []
        while self.peek() != "}":
            name = self.take()
            self.take("=")
            values.append((name, self.take()))
            if self.peek() == ",":
                self.take()
        self.take("}")
        return values

    def union_body(self):
        self.take("switch")
        self.take("(")
        discriminant = self.type_spec()
        discriminant_name = self.take()
        self.take(")")
        self.take("{")
        arms = []
        while self.peek() != "}":
            cases = []
            while self.peek() in ("case", "default"):
                if self.take() == "case":
                    cases.append(self.take())
                else:
                    cases.append(None)
                self.take(":")
            arms.append((cases, self.declaration()))
            self.take(";")
        self.take("}")
        return {"discriminant": discriminant, "discriminantName": discriminant_name, "arms": arms}

    def definitions(self):
        constants, types = {}, {}
        while self.peek() is not None:
            keyword = self.take()
            if keyword == "const":
                name = self.take()
                self.take("=")
                constants[name] = int(self.take(), 0)
                self.take(";")
            elif keyword == "typedef":
                declaration = self.declaration()
                self.take(";")
                types[declaration["name"]] = ("typedef", declaration)
            elif keyword in ("struct", "union", "enum"):
                name = self.take()
                body = {"struct": self.struct_body, "enum": self.enum_body}.get(keyword)
                body = body() if body else self.union_body()
                self.take(";")
                types[name] = (keyword, body)
            else:
                raise SyntaxError(f"unexpected {keyword!r}")
        return constants, types


def camel(name, upper=False):
    parts = [p for p in re.split(r"_+", name) if p]
    if not parts:
        return name
    if name.isupper() or "_" in name:
        words = [p.lower() for p in parts]
    else:
        words = [name[0].lower() + name[1:]]
    text = words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
    if upper:
        text = text[:1].upper() + text[1:]
    return text


def escape(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


class Generator:
    def __init__(self, constants, types):
        self.constants, self.types = constants, types
        # Enum values may name another enum's value (SIGNER_KEY_TYPE_ED25519 = KEY_TYPE_ED25519): resolve them.
        literal = {name: value for kind, body in types.values() if kind == "enum" for name, value in body}
        def resolve(token):
            while token in literal:
                token = literal[token]
            return int(token, 0) if not token in constants else constants[token]
        for type_name, (kind, body) in list(types.items()):
            if kind == "enum":
                types[type_name] = (kind, [(name, str(resolve(value))) for name, value in body])
        self.emitted = []
        self.anonymous = {}  # generated name -> (kind, body)

    def bound(self, token):
        if token is None:
            return None
        return self.constants[token] if token in self.constants else int(token, 0)

    def case_names(self, values):
        names = [n for n, _ in values]
        if len(names) > 1:
            prefix = names[0]
            for n in names[1:]:
                while not n.startswith(prefix):
                    prefix = prefix[:-1]
            prefix = prefix[:prefix.rfind("_") + 1] if "_" in prefix else ""
        else:
            prefix = ""
        result = {}
        for n in names:
            short = n[len(prefix):]
            if not short or short[0].isdigit():
                short = n
            result[n] = escape(camel(short))
        return result

    # Reachability: every named type a type mentions, anonymous bodies included.
    def mentions(self, kind, body):
        found = []
        def spec_mentions(spec):
            k, value = spec
            if k == "named":
                found.append(value)
            elif k == "struct":
                for field in value:
                    if field:
                        spec_mentions(field["spec"])
            elif k == "union":
                spec_mentions(value["discriminant"])
                for _, declaration in value["arms"]:
                    if declaration:
                        spec_mentions(declaration["spec"])
        if kind == "typedef":
            spec_mentions(body["spec"])
        elif kind in ("struct", "union"):
            spec_mentions((kind, body))
        return found

    def reachable(self, root):
        seen, stack = set(), [root]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            kind, body = self.types[name]
            stack.extend(self.mentions(kind, body))
        return seen

    # Swift types and reads for a declaration.
    def swift_type(self, declaration, owner):
        spec, array, optional = declaration["spec"], declaration["array"], declaration["optional"]
        k, value = spec
        if k == "prim" and value in ("opaque", "string"):
            base = "[UInt8]"
        elif k == "prim":
            base = {"int": "Int32", "unsigned int": "UInt32", "hyper": "Int64", "unsigned hyper": "UInt64",
                    "bool": "Bool"}[value]
        elif k == "named":
            base = value
        else:
            base = owner + camel(declaration["name"], upper=True)
            self.anonymous[base] = (k, value)
        if array and not (k == "prim" and value in ("opaque", "string")):
            base = f"[{base}]"
        if optional:
            base += "?"
        return base

    PRIMITIVE_TYPES = {"int": "Int32", "unsigned int": "UInt32", "hyper": "Int64", "unsigned hyper": "UInt64",
                       "bool": "Bool"}

    def plain_primitive(self, name):
        """The primitive a chain of plain typedefs ends in (TimePoint -> uint64 -> unsigned hyper), if any."""
        while name in self.types and self.types[name][0] == "typedef":
            declaration = self.types[name][1]
            if declaration["array"] or declaration["optional"]:
                return None
            kind, value = declaration["spec"]
            if kind == "prim":
                return value if value in self.PRIMITIVE_TYPES else None
            name = value
        return None

    def read_one(self, spec, owner, field_name):
        k, value = spec
        if k == "named" and self.plain_primitive(value):
            spec = k, value = ("prim", self.plain_primitive(value))
        if k == "prim":
            return {"int": "try r.int32()", "unsigned int": "try r.uint32()", "hyper": "try r.int64()",
                    "unsigned hyper": "try r.uint64()", "bool": "try r.bool()"}[value]
        if k == "named":
            return f"try {value}(xdr: &r)"
        return f"try {owner + camel(field_name, upper=True)}(xdr: &r)"

    def read(self, declaration, owner):
        spec, array, optional = declaration["spec"], declaration["array"], declaration["optional"]
        k, value = spec
        if k == "prim" and value in ("opaque", "string"):
            kind, bound = array
            if kind == "fixed":
                expression = f"try r.fixedOpaque({self.bound(bound)})"
            else:
                expression = f"try r.variableOpaque(max: {self.bound(bound) if bound else 'nil'})"
        elif array:
            kind, bound = array
            element = self.read_one(spec, owner, declaration["name"])
            if kind == "fixed":
                expression = f"try r.fixedArray({self.bound(bound)}) {{ r in {element} }}"
            else:
                expression = f"try r.variableArray(max: {self.bound(bound) if bound else 'nil'}) {{ r in {element} }}"
        else:
            expression = self.read_one(spec, owner, declaration["name"])
        if optional:
            expression = f"try r.optional {{ r in {expression} }}"
        return expression

    def emit_enum(self, name, values):
        cases = self.case_names(values)
        out = [f"    enum {name}: Int32, Sendable, CaseIterable {{"]
        for n, v in values:
            out.append(f"        case {cases[n]} = {int(v, 0)}")
        out.append("")
        out.append("        init(xdr r: inout XDRReader) throws {")
        out.append("            let at = r.offset")
        out.append("            let value = try r.int32()")
        out.append(f"            guard let known = Self(rawValue: value) else {{ throw r.unknown(\"{name}\", value, at: at) }}")
        out.append("            self = known")
        out.append("        }")
        out.append("")
        out.append("        /// The name in the XDR definition.")
        out.append("        var xdrName: String {")
        out.append("            switch self {")
        for n, _ in values:
            out.append(f"            case .{cases[n]}: \"{n}\"")
        out.append("            }")
        out.append("        }")
        out.append("    }")
        return out

    def emit_struct(self, name, fields):
        out = [f"    struct {name}: Sendable {{"]
        for field in fields:
            out.append(f"        var {escape(camel(field['name']))}: {self.swift_type(field, name)}")
        out.append("")
        out.append("        init(xdr r: inout XDRReader) throws {")
        out.append("            try r.enter()")
        out.append("            defer { r.leave() }")
        for field in fields:
            out.append(f"            {escape(camel(field['name']))} = {self.read(field, name)}")
        out.append("        }")
        out.append("    }")
        return out

    def emit_union(self, name, body):
        k, discriminant = body["discriminant"]
        out = [f"    indirect enum {name}: Sendable {{"]
        arms = []  # (swift case, discriminant token, declaration)
        used = {}
        for cases, declaration in body["arms"]:
            for case in cases:
                if case is None:
                    raise SystemExit(f"{name}: default arms are not supported")
                if declaration is None:
                    base = camel(case) if not case.lstrip("-").isdigit() else "v" + case.lstrip("-")
                    if k == "named" and discriminant in self.types and self.types[discriminant][0] == "enum":
                        base = self.case_names(self.types[discriminant][1])[case].strip("`")
                else:
                    base = camel(declaration["name"])
                swift_case = base
                if swift_case in used.values():
                    suffix = self.case_names(self.types[discriminant][1])[case].strip("`") if k == "named" else case
                    swift_case = base + suffix[:1].upper() + suffix[1:]
                used[case] = swift_case
                arms.append((escape(swift_case), case, declaration))
        for swift_case, _, declaration in arms:
            if declaration is None:
                out.append(f"        case {swift_case}")
            else:
                out.append(f"        case {swift_case}({self.swift_type(declaration, name)})")
        out.append("")
        out.append("        init(xdr r: inout XDRReader) throws {")
        out.append("            try r.enter()")
        out.append("            defer { r.leave() }")
        if k == "named" and self.types[discriminant][0] == "enum":
            # Where every arm of the enum is handled, no default arm reports an offset: no `at` to warn about.
            if len(arms) < len(self.types[discriminant][1]):
                out.append("            let at = r.offset")
            out.append(f"            let discriminant = try {discriminant}(xdr: &r)")
            cases = self.case_names(self.types[discriminant][1])
            out.append("            switch discriminant {")
            for swift_case, case, declaration in arms:
                label = f"case .{cases[case]}"
                if declaration is None:
                    out.append(f"            {label}: self = .{swift_case}")
                else:
                    out.append(f"            {label}: self = .{swift_case}({self.read(declaration, name)})")
            if len(arms) < len(self.types[discriminant][1]):
                out.append(f"            default: throw r.unknown(\"{name} arm\", discriminant.rawValue, at: at)")
            out.append("            }")
        else:
            reader = {"int": "int32", "unsigned int": "uint32"}[discriminant]
            out.append("            let at = r.offset")
            out.append(f"            let discriminant = try r.{reader}()")
            out.append("            switch discriminant {")
            for swift_case, case, declaration in arms:
                if declaration is None:
                    out.append(f"            case {int(case, 0)}: self = .{swift_case}")
                else:
                    out.append(f"            case {int(case, 0)}: self = .{swift_case}({self.read(declaration, name)})")
            out.append(f"            default: throw r.unknown(\"{name} arm\", Int64(discriminant), at: at)")
            out.append("            }")
        out.append("        }")
        out.append("    }")
        return out

    def emit_typedef(self, name, declaration):
        spec = declaration["spec"]
        if self.plain_primitive(name):
            return [f"    typealias {name} = {self.PRIMITIVE_TYPES[self.plain_primitive(name)]}"]
        plain = spec[0] == "named" and not declaration["array"] and not declaration["optional"]
        if plain:
            return [f"    typealias {name} = {spec[1]}"]
        out = [f"    struct {name}: Sendable {{",
               f"        var value: {self.swift_type(declaration, name)}",
               "",
               "        init(xdr r: inout XDRReader) throws {",
               f"            value = {self.read(declaration, name)}",
               "        }",
               "    }"]
        return out

    def emit(self, name, kind, body):
        if kind == "enum":
            return self.emit_enum(name, body)
        if kind == "struct":
            return self.emit_struct(name, body)
        if kind == "union":
            return self.emit_union(name, body)
        return self.emit_typedef(name, body)

    def generate(self, source_line):
        names = sorted(self.reachable(ROOT))
        lines = [
            "// Generated by scripts/generate-xdr.py from xdr/Stellar-current.x. Do not edit: regenerate.",
            f"// {source_line}",
            f"// The {len(names)} types reachable from {ROOT}; XDRReader enforces the strict rules.",
            "",
            "extension XDR {",
        ]
        for name in names:
            kind, body = self.types[name]
            lines += self.emit(name, kind, body)
            lines.append("")
        done = set()
        while set(self.anonymous) - done:
            for name in sorted(set(self.anonymous) - done):
                done.add(name)
                kind, body = self.anonymous[name]
                lines += self.emit(name, kind, body)
                lines.append("")
        lines[-1] = "}"
        return "\n".join(lines) + "\n"


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    source_line = text.splitlines()[0].lstrip("/ ").strip()
    constants, types = Parser(tokenize(text)).definitions()
    sys.stdout.write(Generator(constants, types).generate(source_line))


if __name__ == "__main__":
    main()
