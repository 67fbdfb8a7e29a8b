//! The values the store binds and reads, the same for SQLite and PostgreSQL: every
//! column is a 64-bit integer, a double, text, or NULL.

use crate::StoreError;

/// One bound parameter or one column of a result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<Option<&str>> for Value {
    fn from(v: Option<&str>) -> Value {
        v.map_or(Value::Null, Value::from)
    }
}

/// `[Value::from(a), Value::from(b), ...]`.
macro_rules! values {
    ($($v:expr),* $(,)?) => { [$($crate::value::Value::from($v)),*] };
}
pub(crate) use values;

/// One result row, its columns in `SELECT` order.
#[derive(Debug)]
pub(crate) struct Row(pub(crate) Vec<Value>);

impl Row {
    fn at(&self, i: usize) -> Result<&Value, StoreError> {
        self.0
            .get(i)
            .ok_or_else(|| StoreError::Column(format!("no column {i}")))
    }

    fn mismatch(&self, i: usize, want: &str) -> StoreError {
        StoreError::Column(format!(
            "column {i}: expected {want}, found {:?}",
            self.0[i]
        ))
    }

    /// An integer column.
    pub(crate) fn int(&self, i: usize) -> Result<i64, StoreError> {
        match self.at(i)? {
            Value::Int(v) => Ok(*v),
            _ => Err(self.mismatch(i, "an integer")),
        }
    }

    /// An integer column that may be NULL.
    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.at(i)? {
            Value::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    /// A non-negative integer column, in the width the caller wants.
    pub(crate) fn uint<T: TryFrom<i64>>(&self, i: usize) -> Result<T, StoreError> {
        let v = self.int(i)?;
        T::try_from(v).map_err(|_| StoreError::Column(format!("column {i}: {v} is out of range")))
    }

    /// A real column (an integer is taken as its value: SQLite stores whole reals
    /// either way).
    pub(crate) fn real(&self, i: usize) -> Result<f64, StoreError> {
        match self.at(i)? {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            _ => Err(self.mismatch(i, "a number")),
        }
    }

    /// A text column, moved out of the row.
    pub(crate) fn text(&mut self, i: usize) -> Result<String, StoreError> {
        match self.opt_text(i)? {
            Some(s) => Ok(s),
            None => Err(self.mismatch(i, "text")),
        }
    }

    /// A text column that may be NULL, moved out of the row.
    pub(crate) fn opt_text(&mut self, i: usize) -> Result<Option<String>, StoreError> {
        self.at(i)?;
        match std::mem::replace(&mut self.0[i], Value::Null) {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s)),
            other => {
                self.0[i] = other;
                Err(self.mismatch(i, "text"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_read_as_their_type_or_refused() {
        let mut row = Row(vec![
            Value::Int(-1),
            Value::Real(2.5),
            Value::Text("t".into()),
            Value::Null,
        ]);
        assert_eq!(row.int(0).unwrap(), -1);
        assert!(matches!(row.uint::<u32>(0), Err(StoreError::Column(_))));
        assert_eq!(row.real(0).unwrap(), -1.0);
        assert_eq!(row.real(1).unwrap(), 2.5);
        assert!(row.int(1).is_err());
        assert_eq!(row.opt_int(3).unwrap(), None);
        assert_eq!(row.opt_text(3).unwrap(), None);
        assert!(row.text(3).is_err());
        assert_eq!(row.text(2).unwrap(), "t");
        assert!(row.int(4).is_err());
    }
}
