//! The ledger's neutral SQL layer: named statements, plain values, rows and transactions
//! that look the same on every backend.
//!
//! Statement text lives in `.sql` files as blocks headed `-- name: <name>`: the statements
//! that read the same in both dialects once (`sql/common/statements.sql`, 60 of 89), and what
//! differs in one file per dialect (`sql/sqlite/statements.sql`, `sql/postgres/statements.sql`).
//! A name is defined once across a dialect's two files, and both dialects end with the same
//! names (unit tests hold them to it). Parameters are written `:name` in both; at load
//! time they become positional (`?N` for SQLite, `$N` for PostgreSQL) and a call binds them by
//! name, so the code that runs a statement is the same whichever engine answers it.

use super::LedgerError;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A value bound to, or read from, a statement. Booleans are integers 0/1 in both schemas.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

/// Something that can be bound as a statement parameter.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

impl ToValue for i64 {
    fn to_value(&self) -> Value {
        Value::Int(*self)
    }
}
impl ToValue for i32 {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}
impl ToValue for u32 {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}
impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}
impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}
impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}
impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}
impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}
impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

/// Named parameters for one call: `args! { "item" => id.0, "now" => now.0 }`.
#[macro_export]
macro_rules! args {
    ($($k:literal => $v:expr),* $(,)?) => {
        &[$(($k, &$v as &dyn $crate::db::ToValue)),*]
    };
}

/// Parameter names are always written into the code, so they are `'static`.
pub type Args<'a> = &'a [(&'static str, &'a dyn ToValue)];

/// Two sets of arguments as one (a lease guard's and a statement's own, say).
pub fn join<'a>(a: Args<'a>, b: Args<'a>) -> Vec<(&'static str, &'a dyn ToValue)> {
    a.iter().chain(b).copied().collect()
}

/// One statement of a [`crate::Tx::pipeline`]: statements sent together, run in
/// order, whose results are read when all are done.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: &'static str,
    pub args: Vec<(&'static str, Value)>,
    /// Whether its rows are wanted (a query), or only how many rows it changed.
    pub query: bool,
}

impl Step {
    pub fn exec(name: &'static str, args: Args<'_>) -> Step {
        Step {
            name,
            args: args.iter().map(|(k, v)| (*k, v.to_value())).collect(),
            query: false,
        }
    }

    pub fn query(name: &'static str, args: Args<'_>) -> Step {
        Step {
            query: true,
            ..Step::exec(name, args)
        }
    }
}

/// What one step of a pipeline answered.
#[derive(Debug, Clone)]
pub enum Out {
    Count(usize),
    Rows(Vec<Row>),
}

impl Out {
    pub fn count(&self) -> usize {
        match self {
            Out::Count(n) => *n,
            Out::Rows(r) => r.len(),
        }
    }

    pub fn rows(self) -> Vec<Row> {
        match self {
            Out::Rows(r) => r,
            Out::Count(_) => Vec::new(),
        }
    }
}

/// Which SQL dialect a ledger speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A statement ready for one dialect: positional text and the parameter names in order.
#[derive(Debug)]
pub struct Stmt {
    pub text: String,
    pub params: Vec<String>,
}

static SQLITE: OnceLock<HashMap<String, Stmt>> = OnceLock::new();
static POSTGRES: OnceLock<HashMap<String, Stmt>> = OnceLock::new();

const COMMON_FILE: &str = include_str!("sql/common/statements.sql");
const SQLITE_FILE: &str = include_str!("sql/sqlite/statements.sql");
const POSTGRES_FILE: &str = include_str!("sql/postgres/statements.sql");

impl Dialect {
    pub fn statements(self) -> &'static HashMap<String, Stmt> {
        match self {
            Dialect::Sqlite => SQLITE.get_or_init(|| parse_files(SQLITE_FILE, self)),
            Dialect::Postgres => POSTGRES.get_or_init(|| parse_files(POSTGRES_FILE, self)),
        }
    }

    pub fn statement(self, name: &str) -> Result<&'static Stmt, LedgerError> {
        self.statements().get(name).ok_or_else(|| {
            LedgerError::Internal(format!("no statement named {name:?} for {self:?}"))
        })
    }
}

/// The common statements and the dialect's own, each name defined once, with their
/// includes expanded.
fn parse_files(own: &str, dialect: Dialect) -> HashMap<String, Stmt> {
    let mut all = HashMap::new();
    for (name, block) in blocks(COMMON_FILE).into_iter().chain(blocks(own)) {
        let prev = all.insert(name.clone(), block);
        assert!(
            prev.is_none(),
            "{name:?} is defined twice (in the common file and the {dialect:?} one, or twice in one)"
        );
    }
    all.iter()
        .filter(|(_, b)| !b.fragment)
        .map(|(name, _)| (name.clone(), positional(&expand(&all, name, 0), dialect)))
        .collect()
}

/// One named block of a statements file: a statement (`-- name: x`), or a fragment
/// (`-- fragment: x`), which is no statement but a piece of SQL several statements share.
struct Block {
    sql: String,
    fragment: bool,
}

/// Splits a statements file into its named blocks (each trimmed, its `;` dropped).
fn blocks(text: &str) -> Vec<(String, Block)> {
    let mut out = Vec::new();
    let mut current: Option<(String, bool)> = None;
    let mut body = String::new();
    let mut flush = |current: &mut Option<(String, bool)>, body: &mut String| {
        if let Some((name, fragment)) = current.take() {
            let sql = body.trim().trim_end_matches(';').trim().to_string();
            out.push((name, Block { sql, fragment }));
        }
        body.clear();
    };
    for line in text.lines() {
        let named = line.strip_prefix("-- name:").map(|n| (n, false));
        let named = named.or_else(|| line.strip_prefix("-- fragment:").map(|n| (n, true)));
        if let Some((n, fragment)) = named {
            flush(&mut current, &mut body);
            current = Some((n.trim().to_string(), fragment));
        } else if current.is_some() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&mut current, &mut body);
    out
}

/// The SQL of block `name`, every `-- include: x` line replaced by block `x`'s SQL (a
/// fragment's, or another statement's), so what statements share is written once.
fn expand(all: &HashMap<String, Block>, name: &str, depth: usize) -> String {
    assert!(depth < 8, "includes nest too deep at {name:?} (a cycle?)");
    let block = all
        .get(name)
        .unwrap_or_else(|| panic!("no statement or fragment named {name:?} to include"));
    block
        .sql
        .lines()
        .map(|line| match line.trim().strip_prefix("-- include:") {
            Some(inc) => expand(all, inc.trim(), depth + 1),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rewrites `:name` parameters as positional ones, leaving `::casts`, string literals and
/// comments alone.
pub fn positional(sql: &str, dialect: Dialect) -> Stmt {
    let mut params: Vec<String> = Vec::new();
    let mut text = String::with_capacity(sql.len());
    let chars: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // A string literal ('' escapes a quote).
            text.push(c);
            i += 1;
            while i < chars.len() {
                text.push(chars[i]);
                if chars[i] == '\'' {
                    i += 1;
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                text.push(chars[i]);
                i += 1;
            }
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            text.push_str("::");
            i += 2;
            continue;
        }
        if c == ':'
            && chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_')
        {
            let start = i + 1;
            let mut end = start;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            let name: String = chars[start..end].iter().collect();
            let n = match params.iter().position(|p| *p == name) {
                Some(k) => k + 1,
                None => {
                    params.push(name);
                    params.len()
                }
            };
            match dialect {
                Dialect::Sqlite => text.push_str(&format!("?{n}")),
                Dialect::Postgres => text.push_str(&format!("${n}")),
            }
            i = end;
            continue;
        }
        text.push(c);
        i += 1;
    }
    Stmt { text, params }
}

impl Stmt {
    /// The call's values in this statement's positional order.
    pub fn bind(&self, name: &str, args: Args<'_>) -> Result<Vec<Value>, LedgerError> {
        self.params
            .iter()
            .map(|p| {
                args.iter()
                    .find(|(k, _)| *k == p)
                    .map(|(_, v)| v.to_value())
                    .ok_or_else(|| {
                        LedgerError::Internal(format!("statement {name:?} needs :{p}, not given"))
                    })
            })
            .collect()
    }
}

/// One result row, with the statement's name for error messages.
#[derive(Debug, Clone)]
pub struct Row {
    pub statement: &'static str,
    pub values: Vec<Value>,
}

/// A type a column can be read as.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Option<Self>;
    /// The same, from a value given up by its row (no copy of text).
    fn from_owned(v: Value) -> Option<Self> {
        Self::from_value(&v)
    }
    const WHAT: &'static str;
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    const WHAT: &'static str = "an integer";
}
impl FromValue for bool {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Int(i) => Some(*i != 0),
            _ => None,
        }
    }
    const WHAT: &'static str = "a boolean";
}
impl FromValue for String {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
    fn from_owned(v: Value) -> Option<Self> {
        match v {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }
    const WHAT: &'static str = "text";
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
    fn from_owned(v: Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            v => T::from_owned(v).map(Some),
        }
    }
    const WHAT: &'static str = T::WHAT;
}

impl Row {
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T, LedgerError> {
        let v = self.values.get(i).unwrap_or(&Value::Null);
        T::from_value(v).ok_or_else(|| self.mismatch::<T>(i, v))
    }

    /// Column `i` moved out of the row, for readers of many rows (the row keeps NULL there).
    pub fn take<T: FromValue>(&mut self, i: usize) -> Result<T, LedgerError> {
        let v = self
            .values
            .get_mut(i)
            .map(|v| std::mem::replace(v, Value::Null))
            .unwrap_or(Value::Null);
        let found = match &v {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Text(_) => "text",
        };
        T::from_owned(v).ok_or_else(|| {
            LedgerError::Internal(format!(
                "statement {:?}, column {i}: expected {}, found {found}",
                self.statement,
                T::WHAT
            ))
        })
    }

    fn mismatch<T: FromValue>(&self, i: usize, v: &Value) -> LedgerError {
        LedgerError::Internal(format!(
            "statement {:?}, column {i}: expected {}, found {v:?}",
            self.statement,
            T::WHAT
        ))
    }
}

/// What kind of failure a database reported, as far as fencepost cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbErrorKind {
    /// Locked by another connection right now (SQLite busy).
    Busy,
    /// A unique or primary-key constraint refused the write.
    Unique,
    /// PostgreSQL aborted the transaction to keep it serialisable (or to break a deadlock):
    /// running it again is the cure.
    Retry,
    /// The file or database is not a usable ledger.
    NotALedger,
    /// Could not reach the database.
    Connect,
    Other,
}

/// A database error without any driver type in it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    pub kind: DbErrorKind,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_positional_and_casts_and_literals_stay() {
        let s = positional(
            "SELECT :a, ':not', :b::bigint, :a -- :c\n, x::text",
            Dialect::Postgres,
        );
        assert_eq!(s.text, "SELECT $1, ':not', $2::bigint, $1 -- :c\n, x::text");
        assert_eq!(s.params, vec!["a", "b"]);
        let s = positional("SELECT :a, :b, :a", Dialect::Sqlite);
        assert_eq!(s.text, "SELECT ?1, ?2, ?1");
    }

    #[test]
    fn both_dialects_define_the_same_statements() {
        let mut a: Vec<_> = Dialect::Sqlite.statements().keys().collect();
        let mut b: Vec<_> = Dialect::Postgres.statements().keys().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        // And each statement takes the same parameters on both, except that a PostgreSQL
        // statement may leave some out (the shared ledger keeps no per-host stat fields).
        for name in a {
            let pa = &Dialect::Sqlite.statements()[name].params;
            let pb = &Dialect::Postgres.statements()[name].params;
            assert!(
                pb.iter().all(|p| pa.contains(p)),
                "parameters of {name}: {pa:?} vs {pb:?}"
            );
            if name != "items.upsert_seen" {
                assert_eq!(pa.len(), pb.len(), "parameters of {name}: {pa:?} vs {pb:?}");
            }
        }
    }

    /// A fragment is no statement; an include takes in a fragment or another statement.
    #[test]
    fn includes_take_in_fragments_and_statements() {
        let text = "-- fragment: cols\nSELECT a, :b\n\n-- name: all\n-- include: cols\nFROM t;\n\n\
                    -- name: one\n-- include: all\nWHERE id = :id;\n";
        let all: HashMap<String, Block> = blocks(text).into_iter().collect();
        assert!(all["cols"].fragment && !all["all"].fragment);
        assert_eq!(
            expand(&all, "one", 0),
            "SELECT a, :b\nFROM t\nWHERE id = :id"
        );
        // A dialect's file defines what the common statements include from it.
        let own = "-- fragment: pages.due_by_ledger_clock\n1\n\n\
                   -- name: x\n-- include: items.columns\nFROM items i;\n";
        let parsed = parse_files(own, Dialect::Sqlite);
        assert!(parsed.contains_key("x") && !parsed.contains_key("items.columns"));
        assert!(
            parsed["x"].text.contains("\nSELECT i.id"),
            "{}",
            parsed["x"].text
        );
    }

    #[test]
    fn binding_a_missing_parameter_is_an_error() {
        let s = positional("SELECT :a, :b", Dialect::Sqlite);
        assert!(s.bind("t", args! { "a" => 1i64 }).is_err());
        assert_eq!(
            s.bind("t", args! { "b" => "x", "a" => 1i64, "extra" => 2i64 })
                .unwrap(),
            vec![Value::Int(1), Value::Text("x".into())]
        );
    }
}

/// One cell of a row read in place.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    Text(Cow<'a, str>),
}

impl Cell<'_> {
    /// The cell as text (`None` for NULL); an integer is not text.
    pub fn text(&self) -> Result<Option<&str>, LedgerError> {
        match self {
            Cell::Null => Ok(None),
            Cell::Text(t) => Ok(Some(t)),
            Cell::Int(i) => Err(LedgerError::Internal(format!(
                "expected text, found the integer {i}"
            ))),
        }
    }

    /// The cell as an integer (`None` for NULL).
    pub fn int(&self) -> Result<Option<i64>, LedgerError> {
        match self {
            Cell::Null => Ok(None),
            Cell::Int(i) => Ok(Some(*i)),
            Cell::Text(t) => Err(LedgerError::Internal(format!(
                "expected an integer, found the text {t:?}"
            ))),
        }
    }
}

impl<'a> From<&'a Value> for Cell<'a> {
    fn from(v: &'a Value) -> Cell<'a> {
        match v {
            Value::Null => Cell::Null,
            Value::Int(i) => Cell::Int(*i),
            Value::Text(t) => Cell::Text(Cow::Borrowed(t)),
        }
    }
}

impl From<Cell<'_>> for Value {
    fn from(c: Cell<'_>) -> Value {
        match c {
            Cell::Null => Value::Null,
            Cell::Int(i) => Value::Int(i),
            Cell::Text(t) => Value::Text(t.into_owned()),
        }
    }
}
