//! Typed JSON tensor data <-> raw tensor bytes.
//!
//! Reading: the `data` member of an input is parsed once its datatype is
//! known (in the header's own pass when `name`, `shape` and `datatype` come
//! first, else from its raw JSON slice afterwards), straight into the
//! tensor's little-endian bytes (BYTES elements as 4-byte length + bytes),
//! flattening nested arrays. Writing: elements stream straight from the
//! tensor bytes into the JSON text.

use std::fmt;

use oxiserve_types::{DataType, Error};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::json_write;
use super::special_literals;

/// The input whose JSON `data` is read, for checks and messages.
pub(crate) struct DataTarget<'a> {
    pub model: &'a str,
    pub name: &'a str,
    pub datatype: DataType,
    /// The element count of the input's shape; the number of elements must
    /// match it.
    pub expected: usize,
    /// Whether the request's `NaN`, `Infinity` and `-Infinity` literals were
    /// rewritten to placeholder strings (see [`special_literals`]).
    pub specials: bool,
    /// The length of the JSON text the data is in (an upper bound on its
    /// element count times two).
    pub json_len: usize,
}

/// Parses the JSON `data` of an input (the raw JSON text of the member)
/// into the tensor's bytes, flattening nested arrays.
pub(crate) fn read_json_data(target: &DataTarget<'_>, raw: &str) -> Result<Vec<u8>, Error> {
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let parsed = DataSeed(target)
        .deserialize(&mut deserializer)
        .and_then(|data| deserializer.end().map(|()| data));
    match parsed {
        Ok(data) => data,
        // The text is valid JSON (it came out of a parsed document), so this
        // is serde_json's nesting limit.
        Err(err) => Err(Error::internal(format!(
            "Unable to parse 'data' of input '{}': {}",
            target.name,
            strip_position(&err)
        ))),
    }
}

/// serde_json's message without its " at line L column C" suffix, for errors
/// whose position would be relative to a fragment of the request.
pub(crate) fn strip_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) if err.line() > 0 => text[..at].to_string(),
        _ => text,
    }
}

/// Reads the `data` member of an input from a deserializer, whatever the
/// member's JSON, so that the document around it can go on being parsed:
/// the outer `Result` is a JSON syntax error, the inner one an error in the
/// data (a wrong element, a count that does not fit the shape).
pub(crate) struct DataSeed<'t>(pub &'t DataTarget<'t>);

impl<'de> DeserializeSeed<'de> for DataSeed<'_> {
    type Value = Result<Vec<u8>, Error>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let target = self.0;
        match target.datatype {
            DataType::Bool => read_typed::<BoolElement, D>(target, deserializer),
            DataType::Uint8 => read_typed::<UintElement<u8>, D>(target, deserializer),
            DataType::Uint16 => read_typed::<UintElement<u16>, D>(target, deserializer),
            DataType::Uint32 => read_typed::<UintElement<u32>, D>(target, deserializer),
            DataType::Uint64 => read_typed::<UintElement<u64>, D>(target, deserializer),
            DataType::Int8 => read_typed::<IntElement<i8>, D>(target, deserializer),
            DataType::Int16 => read_typed::<IntElement<i16>, D>(target, deserializer),
            DataType::Int32 => read_typed::<IntElement<i32>, D>(target, deserializer),
            DataType::Int64 => read_typed::<IntElement<i64>, D>(target, deserializer),
            DataType::Fp32 => read_typed::<Fp32Element, D>(target, deserializer),
            DataType::Fp64 => read_typed::<Fp64Element, D>(target, deserializer),
            DataType::Bytes => read_typed::<BytesElement, D>(target, deserializer),
            // Triton 2.51's text, word for word.
            DataType::Fp16 | DataType::Bf16 => {
                deserializer.deserialize_ignored_any(IgnoredAny)?;
                Ok(Err(Error::invalid_arg(format!(
                    "receiving {} data via JSON is not supported. Please use the binary data \
                     format for input {}",
                    target.datatype, target.name
                ))))
            }
        }
    }
}

/// Why a JSON element was refused.
enum Reject {
    /// The JSON type does not fit the datatype (a string for FP32, 1.5 for INT32).
    Type,
    /// An integer outside the datatype's range (300 for UINT8).
    Range,
}

/// How one datatype takes JSON scalars into the tensor bytes. Every method
/// refuses by default; each datatype accepts the JSON types it allows.
trait Element {
    /// What the datatype's JSON elements must be, for messages.
    const EXPECTED: &'static str;
    /// Bytes each element takes in the output (a lower bound for BYTES).
    const SIZE: usize;

    fn bool(_out: &mut Vec<u8>, _v: bool) -> Result<(), Reject> {
        Err(Reject::Type)
    }
    fn u64(_out: &mut Vec<u8>, _v: u64) -> Result<(), Reject> {
        Err(Reject::Type)
    }
    fn i64(_out: &mut Vec<u8>, _v: i64) -> Result<(), Reject> {
        Err(Reject::Type)
    }
    fn f64(_out: &mut Vec<u8>, _v: f64) -> Result<(), Reject> {
        Err(Reject::Type)
    }
    fn str(_out: &mut Vec<u8>, _v: &str) -> Result<(), Reject> {
        Err(Reject::Type)
    }
}

struct BoolElement;

impl Element for BoolElement {
    const EXPECTED: &'static str = "true or false";
    const SIZE: usize = 1;

    fn bool(out: &mut Vec<u8>, v: bool) -> Result<(), Reject> {
        out.push(u8::from(v));
        Ok(())
    }
}

/// Fixed-size little-endian integers.
trait LeInt: Copy + TryFrom<u64> + TryFrom<i64> {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le_int {
    ($($t:ty),*) => {$(
        impl LeInt for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

le_int!(u8, u16, u32, u64, i8, i16, i32, i64);

struct UintElement<T>(std::marker::PhantomData<T>);

impl<T: LeInt> Element for UintElement<T> {
    const EXPECTED: &'static str = "non-negative integers";
    const SIZE: usize = T::SIZE;

    fn u64(out: &mut Vec<u8>, v: u64) -> Result<(), Reject> {
        T::try_from(v).map_err(|_| Reject::Range)?.put(out);
        Ok(())
    }
    fn i64(_out: &mut Vec<u8>, _v: i64) -> Result<(), Reject> {
        // serde_json only hands negative integers to visit_i64: not an
        // unsigned integer, as Triton sees it.
        Err(Reject::Type)
    }
}

struct IntElement<T>(std::marker::PhantomData<T>);

impl<T: LeInt> Element for IntElement<T> {
    const EXPECTED: &'static str = "integers";
    const SIZE: usize = T::SIZE;

    fn u64(out: &mut Vec<u8>, v: u64) -> Result<(), Reject> {
        T::try_from(v).map_err(|_| Reject::Range)?.put(out);
        Ok(())
    }
    fn i64(out: &mut Vec<u8>, v: i64) -> Result<(), Reject> {
        T::try_from(v).map_err(|_| Reject::Range)?.put(out);
        Ok(())
    }
}

/// FP32 takes any JSON number, rounded to the nearest f32 (out-of-range
/// values become infinities, as in Triton).
struct Fp32Element;

impl Element for Fp32Element {
    const EXPECTED: &'static str = "numbers";
    const SIZE: usize = 4;

    fn u64(out: &mut Vec<u8>, v: u64) -> Result<(), Reject> {
        out.extend_from_slice(&(v as f32).to_le_bytes());
        Ok(())
    }
    fn i64(out: &mut Vec<u8>, v: i64) -> Result<(), Reject> {
        out.extend_from_slice(&(v as f32).to_le_bytes());
        Ok(())
    }
    fn f64(out: &mut Vec<u8>, v: f64) -> Result<(), Reject> {
        out.extend_from_slice(&(v as f32).to_le_bytes());
        Ok(())
    }
}

struct Fp64Element;

impl Element for Fp64Element {
    const EXPECTED: &'static str = "numbers";
    const SIZE: usize = 8;

    fn u64(out: &mut Vec<u8>, v: u64) -> Result<(), Reject> {
        out.extend_from_slice(&(v as f64).to_le_bytes());
        Ok(())
    }
    fn i64(out: &mut Vec<u8>, v: i64) -> Result<(), Reject> {
        out.extend_from_slice(&(v as f64).to_le_bytes());
        Ok(())
    }
    fn f64(out: &mut Vec<u8>, v: f64) -> Result<(), Reject> {
        out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
}

/// BYTES takes strings: their UTF-8 bytes, each after a 4-byte length.
struct BytesElement;

impl Element for BytesElement {
    const EXPECTED: &'static str = "strings";
    const SIZE: usize = 4;

    fn str(out: &mut Vec<u8>, v: &str) -> Result<(), Reject> {
        let len = u32::try_from(v.len()).map_err(|_| Reject::Range)?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(v.as_bytes());
        Ok(())
    }
}

/// The element a refused value was, for messages.
enum Got {
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str,
    Null,
    Object,
}

impl fmt::Display for Got {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Got::Bool(v) => write!(f, "{v}"),
            Got::U64(v) => write!(f, "{v}"),
            Got::I64(v) => write!(f, "{v}"),
            Got::F64(v) if v.is_nan() => f.write_str("NaN"),
            Got::F64(v) if v.is_infinite() => {
                f.write_str(if *v > 0.0 { "Infinity" } else { "-Infinity" })
            }
            Got::F64(v) => write!(f, "{v:?}"),
            Got::Str => f.write_str("a string"),
            Got::Null => f.write_str("null"),
            Got::Object => f.write_str("an object"),
        }
    }
}

/// Collects the elements of one input, in order, whatever the nesting.
struct Sink<E> {
    out: Vec<u8>,
    /// Elements seen so far (all of them, also past `expected`).
    count: usize,
    /// Elements the shape asks for; elements past it are counted, not kept.
    expected: usize,
    /// The first refused element: its index, value and why.
    refused: Option<(usize, Got, Reject)>,
    /// Whether placeholder strings stand for NaN and the infinities.
    specials: bool,
    element: std::marker::PhantomData<E>,
}

impl<E: Element> Sink<E> {
    /// Takes the next element. After a refused one, elements are counted and
    /// nothing else: parsing goes on to the end of the data, so that the rest
    /// of the request can be parsed.
    fn take(
        &mut self,
        got: impl FnOnce() -> Got,
        put: impl FnOnce(&mut Vec<u8>) -> Result<(), Reject>,
    ) {
        let index = self.count;
        self.count += 1;
        if index >= self.expected || self.refused.is_some() {
            // Too many elements, or already refused: keep nothing.
            return;
        }
        if let Err(why) = put(&mut self.out) {
            self.refused = Some((index, got(), why));
        }
    }
}

impl<'de, E: Element> DeserializeSeed<'de> for &mut Sink<E> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, E: Element> Visitor<'de> for &mut Sink<E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {}", E::EXPECTED)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(&mut *self)?.is_some() {}
        Ok(())
    }

    fn visit_bool<Err: de::Error>(self, v: bool) -> Result<(), Err> {
        self.take(|| Got::Bool(v), |out| E::bool(out, v));
        Ok(())
    }

    fn visit_u64<Err: de::Error>(self, v: u64) -> Result<(), Err> {
        self.take(|| Got::U64(v), |out| E::u64(out, v));
        Ok(())
    }

    fn visit_i64<Err: de::Error>(self, v: i64) -> Result<(), Err> {
        self.take(|| Got::I64(v), |out| E::i64(out, v));
        Ok(())
    }

    fn visit_f64<Err: de::Error>(self, v: f64) -> Result<(), Err> {
        self.take(|| Got::F64(v), |out| E::f64(out, v));
        Ok(())
    }

    fn visit_str<Err: de::Error>(self, v: &str) -> Result<(), Err> {
        if self.specials
            && let Some(value) = special_literals::value(v)
        {
            return self.visit_f64(value);
        }
        self.take(|| Got::Str, |out| E::str(out, v));
        Ok(())
    }

    fn visit_unit<Err: de::Error>(self) -> Result<(), Err> {
        self.take(|| Got::Null, |_| Err(Reject::Type));
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.take(|| Got::Object, |_| Err(Reject::Type));
        Ok(())
    }
}

/// The top of the `data` member, which must be an array.
struct DataVisitor<'t, E> {
    target: &'t DataTarget<'t>,
    element: std::marker::PhantomData<E>,
}

impl<'de, E: Element> Visitor<'de> for DataVisitor<'_, E> {
    type Value = Result<Vec<u8>, Error>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of {}", E::EXPECTED)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let target = self.target;
        // Each element takes at least two bytes of JSON text with its comma,
        // so the text's size bounds what a lying shape can make us reserve.
        let capacity = target
            .expected
            .min(target.json_len / 2 + 1)
            .saturating_mul(E::SIZE);
        let mut sink = Sink::<E> {
            out: Vec::with_capacity(capacity),
            count: 0,
            expected: target.expected,
            refused: None,
            specials: target.specials,
            element: std::marker::PhantomData,
        };
        while seq.next_element_seed(&mut sink)?.is_some() {}
        Ok(finish(target, sink))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Err(self.not_an_array()))
    }

    fn visit_bool<Err: de::Error>(self, _: bool) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }

    fn visit_i64<Err: de::Error>(self, _: i64) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }

    fn visit_u64<Err: de::Error>(self, _: u64) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }

    fn visit_f64<Err: de::Error>(self, _: f64) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }

    fn visit_str<Err: de::Error>(self, _: &str) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }

    fn visit_unit<Err: de::Error>(self) -> Result<Self::Value, Err> {
        Ok(Err(self.not_an_array()))
    }
}

impl<E: Element> DataVisitor<'_, E> {
    fn not_an_array(&self) -> Error {
        Error::internal(format!(
            "Unable to parse 'data' of input '{}': expected an array of {}",
            self.target.name,
            E::EXPECTED
        ))
    }
}

fn read_typed<'de, E: Element, D: Deserializer<'de>>(
    target: &DataTarget<'_>,
    deserializer: D,
) -> Result<Result<Vec<u8>, Error>, D::Error> {
    deserializer.deserialize_any(DataVisitor::<E> {
        target,
        element: std::marker::PhantomData,
    })
}

/// The tensor's bytes, or why the elements do not make the tensor.
fn finish<E: Element>(target: &DataTarget<'_>, sink: Sink<E>) -> Result<Vec<u8>, Error> {
    let DataTarget {
        model,
        name,
        datatype,
        expected,
        ..
    } = *target;
    if let Some((index, got, why)) = sink.refused {
        return Err(match why {
            // A JSON type error: internal, as in Triton (HTTP 500).
            Reject::Type => Error::internal(format!(
                "Unable to parse 'data' of input '{name}': {datatype} elements must be {}, \
                 got {got} at element {index}",
                E::EXPECTED
            )),
            // Triton truncates these to the type's width; refusing them is
            // oxiserve's own check, an invalid argument.
            Reject::Range => Error::invalid_arg(format!(
                "Unable to parse 'data' of input '{name}': value {got} at element {index} is \
                 out of range for {datatype}"
            )),
        });
    }
    let count = sink.count;
    if count != expected {
        return Err(if datatype == DataType::Bytes {
            // Triton's core finds these, in these words.
            Error::invalid_arg(if count < expected {
                format!(
                    "expected {expected} string elements for inference input '{name}' for model \
                     '{model}', got {count}"
                )
            } else {
                format!(
                    "unexpected number of string elements {count} for inference input '{name}' \
                     for model '{model}', expecting {expected}"
                )
            })
        } else {
            // Internal in Triton (HTTP 500), in exactly its words: clients
            // and scripts compare the body.
            Error::internal(
                "Unable to parse 'data': Shape does not match true shape of 'data' field",
            )
        });
    }
    Ok(sink.out)
}

/// Appends the tensor's elements as a JSON array (`[1,2,3]`), `count`
/// elements of `datatype` read from `data`. FP16 and BF16 cannot be sent as
/// JSON (Triton refuses them too); a `data` size that does not fit the
/// element count is an internal error.
pub(crate) fn write_json_data(
    out: &mut Vec<u8>,
    name: &str,
    datatype: DataType,
    count: usize,
    data: &[u8],
) -> Result<(), Error> {
    let mismatch = || {
        Error::internal(format!(
            "output tensor shape does not match size of output for '{name}'"
        ))
    };
    if matches!(datatype, DataType::Fp16 | DataType::Bf16) {
        // Triton 2.51's text, with the output's name added.
        return Err(Error::invalid_arg(format!(
            "sending {datatype} data via JSON is not supported. Please use the binary data \
             format for output {name}"
        )));
    }
    if let Some(size) = datatype.element_size()
        && count.checked_mul(size) != Some(data.len())
    {
        return Err(mismatch());
    }
    out.reserve(count.saturating_mul(json_width(datatype)).min(1 << 30) + 2);
    out.push(b'[');
    match datatype {
        DataType::Bool => {
            write_elements::<1>(out, data, |out, b| json_write::write_bool(out, b[0] != 0))
        }
        DataType::Uint8 => write_elements::<1>(out, data, |out, b| {
            json_write::write_u64(out, u64::from(b[0]))
        }),
        DataType::Uint16 => write_elements::<2>(out, data, |out, b| {
            json_write::write_u64(out, u64::from(u16::from_le_bytes(*b)))
        }),
        DataType::Uint32 => write_elements::<4>(out, data, |out, b| {
            json_write::write_u64(out, u64::from(u32::from_le_bytes(*b)))
        }),
        DataType::Uint64 => write_elements::<8>(out, data, |out, b| {
            json_write::write_u64(out, u64::from_le_bytes(*b))
        }),
        DataType::Int8 => write_elements::<1>(out, data, |out, b| {
            json_write::write_i64(out, i64::from(i8::from_le_bytes(*b)))
        }),
        DataType::Int16 => write_elements::<2>(out, data, |out, b| {
            json_write::write_i64(out, i64::from(i16::from_le_bytes(*b)))
        }),
        DataType::Int32 => write_elements::<4>(out, data, |out, b| {
            json_write::write_i64(out, i64::from(i32::from_le_bytes(*b)))
        }),
        DataType::Int64 => write_elements::<8>(out, data, |out, b| {
            json_write::write_i64(out, i64::from_le_bytes(*b))
        }),
        // Triton writes FP32 elements as doubles: 0.1f32 is 0.10000000149011612.
        DataType::Fp32 => write_elements::<4>(out, data, |out, b| {
            json_write::write_f64(out, f64::from(f32::from_le_bytes(*b)))
        }),
        DataType::Fp64 => write_elements::<8>(out, data, |out, b| {
            json_write::write_f64(out, f64::from_le_bytes(*b))
        }),
        DataType::Bytes => {
            let mut rest = data;
            for i in 0..count {
                let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                    return Err(mismatch());
                };
                let len = u32::from_le_bytes(*len) as usize;
                if len > tail.len() {
                    return Err(mismatch());
                }
                let (element, tail) = tail.split_at(len);
                if i > 0 {
                    out.push(b',');
                }
                // Raw bytes, UTF-8 or not, exactly as Triton writes them.
                json_write::write_string(out, element);
                rest = tail;
            }
        }
        DataType::Fp16 | DataType::Bf16 => unreachable!("refused above"),
    }
    out.push(b']');
    Ok(())
}

/// A guess of the JSON text per element, to reserve the output once.
fn json_width(datatype: DataType) -> usize {
    match datatype {
        DataType::Bool => 6,
        DataType::Uint8 | DataType::Int8 => 4,
        DataType::Uint16 | DataType::Int16 => 6,
        DataType::Uint32 | DataType::Int32 => 11,
        DataType::Uint64 | DataType::Int64 => 20,
        DataType::Fp32 | DataType::Fp64 => 20,
        DataType::Bytes | DataType::Fp16 | DataType::Bf16 => 8,
    }
}

fn write_elements<const N: usize>(
    out: &mut Vec<u8>,
    data: &[u8],
    mut write: impl FnMut(&mut Vec<u8>, &[u8; N]),
) {
    let mut chunks = data.chunks_exact(N);
    if let Some(first) = chunks.next() {
        write(out, first.try_into().expect("chunk of N bytes"));
        for chunk in chunks {
            out.push(b',');
            write(out, chunk.try_into().expect("chunk of N bytes"));
        }
    }
}

#[cfg(test)]
mod tests;
