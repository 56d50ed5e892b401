//! GitHub Actions expressions (`${{ … }}` and `if:`), as far as fencepost's workflows use
//! them: string literals, context paths, `==`, `!=`, `!`, `&&`, `||` (which, as in Actions,
//! give an operand's value, so `vars.X || 'default'` is a default), parentheses, and the
//! functions `always()`, `success()`, `failure()`, `format()` and `hashFiles()`. Anything
//! else panics, so a workflow that grows one fails until this learns it.

/// A value: Actions compares strings and booleans.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Bool(bool),
}

impl Value {
    pub fn truthy(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Str(s) => !s.is_empty(),
        }
    }

    pub fn text(&self) -> String {
        match self {
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => s.clone(),
        }
    }
}

/// What an expression reads: context paths and the job's state.
pub trait Context {
    /// `github.run_id`, `steps.ID.outputs.K`, …: panics on a path it does not know.
    fn lookup(&self, path: &str) -> String;
    /// Whether a step of the job failed so far.
    fn failed(&self) -> bool;
    /// `hashFiles(pattern)`: "" when no file matches.
    fn hash_files(&self, pattern: &str) -> String;
}

pub fn eval(text: &str, cx: &dyn Context) -> Value {
    let tokens = tokens(text);
    let mut p = Parser {
        t: &tokens,
        at: 0,
        cx,
    };
    let v = p.or();
    assert!(p.at == tokens.len(), "this runner cannot read {text:?}");
    v
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Name(String),
    Op(&'static str),
}

fn tokens(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let end = text[i + 1..].find('\'').expect("an unclosed string") + i + 1;
            out.push(Tok::Str(text[i + 1..end].to_string()));
            i = end + 1;
        } else if let Some(op) = ["==", "!=", "&&", "||", "!", "(", ")", ","]
            .into_iter()
            .find(|op| text[i..].starts_with(op))
        {
            out.push(Tok::Op(op));
            i += op.len();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let len = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
                .unwrap_or(text.len() - i);
            out.push(Tok::Name(text[i..i + len].to_string()));
            i += len;
        } else {
            panic!("this runner cannot read {text:?} at {i}");
        }
    }
    out
}

struct Parser<'a> {
    t: &'a [Tok],
    at: usize,
    cx: &'a dyn Context,
}

impl Parser<'_> {
    fn eat(&mut self, op: &str) -> bool {
        let hit = matches!(self.t.get(self.at), Some(Tok::Op(o)) if *o == op);
        self.at += usize::from(hit);
        hit
    }

    fn or(&mut self) -> Value {
        let mut v = self.and();
        while self.eat("||") {
            let r = self.and();
            if !v.truthy() {
                v = r;
            }
        }
        v
    }

    fn and(&mut self) -> Value {
        let mut v = self.cmp();
        while self.eat("&&") {
            let r = self.cmp();
            if v.truthy() {
                v = r;
            }
        }
        v
    }

    fn cmp(&mut self) -> Value {
        let l = self.unary();
        if self.eat("==") {
            return Value::Bool(l.text() == self.unary().text());
        }
        if self.eat("!=") {
            return Value::Bool(l.text() != self.unary().text());
        }
        l
    }

    fn unary(&mut self) -> Value {
        if self.eat("!") {
            return Value::Bool(!self.unary().truthy());
        }
        if self.eat("(") {
            let v = self.or();
            assert!(self.eat(")"), "an unclosed parenthesis");
            return v;
        }
        match self.t.get(self.at).cloned() {
            Some(Tok::Str(s)) => {
                self.at += 1;
                Value::Str(s)
            }
            Some(Tok::Name(n)) => {
                self.at += 1;
                match self.eat("(") {
                    true => self.call(&n),
                    false => Value::Str(self.cx.lookup(&n)),
                }
            }
            t => panic!("this runner cannot read the expression at {t:?}"),
        }
    }

    fn call(&mut self, name: &str) -> Value {
        let mut args = Vec::new();
        while !self.eat(")") {
            args.push(self.or());
            self.eat(",");
        }
        match (name, args.as_slice()) {
            ("always", []) => Value::Bool(true),
            ("success", []) => Value::Bool(!self.cx.failed()),
            ("failure", []) => Value::Bool(self.cx.failed()),
            ("hashFiles", [pattern]) => Value::Str(self.cx.hash_files(&pattern.text())),
            ("format", [f, rest @ ..]) => {
                let mut out = f.text();
                for (i, a) in rest.iter().enumerate() {
                    out = out.replace(&format!("{{{i}}}"), &a.text());
                }
                Value::Str(out)
            }
            _ => panic!("this runner does not know the function {name}({args:?})"),
        }
    }
}

/// Whether an `if:` names a status function; without one, Actions runs the step only while
/// the job has not failed (an implicit `success() &&`).
pub fn names_status(cond: &str) -> bool {
    ["always()", "success()", "failure()"]
        .iter()
        .any(|f| cond.contains(f))
}
