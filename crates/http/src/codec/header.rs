//! The JSON header of an inference request, read in one pass: top-level
//! members kept as raw JSON, `inputs` split per input, and an input's `data`
//! parsed straight into tensor bytes when its name, shape and datatype come
//! before it (as clients write them).

use std::fmt;

use oxiserve_types::{DataType, Error, element_count};
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;

use super::json_data::{DataSeed, DataTarget};
use super::special_literals;

/// The top-level members of the JSON header; everything else is ignored.
/// `inputs` is parsed here in the same pass, each input's members kept as raw
/// JSON, except `data` when the input's name, shape and datatype come before
/// it (as clients write them): then it is parsed straight into the tensor's
/// bytes, in this same pass.
pub(super) struct RequestHeader<'a> {
    pub id: Option<&'a RawValue>,
    pub parameters: Option<&'a RawValue>,
    pub inputs: Option<Inputs<'a>>,
    pub outputs: Option<&'a RawValue>,
}

pub(super) struct Inputs<'a>(pub Vec<InputHeader<'a>>);

#[derive(Default)]
pub(super) struct InputHeader<'a> {
    pub name: Option<&'a RawValue>,
    pub shape: Option<&'a RawValue>,
    pub datatype: Option<&'a RawValue>,
    pub parameters: Option<&'a RawValue>,
    pub data: Option<InputData<'a>>,
}

/// An input's `data` member.
pub(super) enum InputData<'a> {
    /// To be parsed once the datatype is known.
    Raw(&'a RawValue),
    /// Parsed as it was read.
    Parsed(Result<Vec<u8>, Error>),
}

/// Parses the JSON header.
pub(super) fn parse_header<'a>(
    json: &'a [u8],
    decoder: &Decoder<'_>,
) -> Result<RequestHeader<'a>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let header = HeaderSeed {
        decoder,
        json_len: json.len(),
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(header)
}

/// What decoding a header needs besides the header.
pub(super) struct Decoder<'a> {
    pub model_name: &'a str,
    /// Whether the header went through [`special_literals::rewrite`].
    pub specials: bool,
}

impl Decoder<'_> {
    /// A JSON string member (never a NaN or infinity placeholder).
    pub(super) fn string(&self, raw: &RawValue) -> Option<String> {
        let s: String = serde_json::from_str(raw.get()).ok()?;
        self.plain(s)
    }

    /// `s`, unless it is a placeholder for a literal that is not a string.
    pub(super) fn plain(&self, s: String) -> Option<String> {
        if self.specials && special_literals::value(&s).is_some() {
            return None;
        }
        Some(s)
    }
}

/// `[1, 3]`: dimensions are non-negative and fit `i64`.
pub(super) fn parse_shape(raw: &RawValue) -> Option<Vec<i64>> {
    let dims: Vec<u64> = serde_json::from_str(raw.get()).ok()?;
    dims.into_iter().map(|d| i64::try_from(d).ok()).collect()
}

/// Member names the header visitors look at.
enum Member {
    Id,
    Parameters,
    Inputs,
    Outputs,
    Name,
    Shape,
    Datatype,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Member, E> {
                Ok(match v {
                    "id" => Member::Id,
                    "parameters" => Member::Parameters,
                    "inputs" => Member::Inputs,
                    "outputs" => Member::Outputs,
                    "name" => Member::Name,
                    "shape" => Member::Shape,
                    "datatype" => Member::Datatype,
                    "data" => Member::Data,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

/// Keeps the first occurrence of a member, as RapidJSON's lookup does.
fn keep_first<'a, 'de: 'a, A: MapAccess<'de>>(
    slot: &mut Option<&'a RawValue>,
    map: &mut A,
) -> Result<(), A::Error> {
    let value: &'de RawValue = map.next_value()?;
    if slot.is_none() {
        *slot = Some(value);
    }
    Ok(())
}

/// The context the header's visitors need to parse `data` in place.
#[derive(Clone, Copy)]
struct HeaderSeed<'d> {
    decoder: &'d Decoder<'d>,
    /// The length of the JSON header, to bound reservations.
    json_len: usize,
}

impl<'de> DeserializeSeed<'de> for HeaderSeed<'_> {
    type Value = RequestHeader<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(HeaderVisitor(self))
    }
}

struct HeaderVisitor<'d>(HeaderSeed<'d>);

impl<'de> Visitor<'de> for HeaderVisitor<'_> {
    type Value = RequestHeader<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an inference request: a JSON object with an 'inputs' member")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut header = RequestHeader {
            id: None,
            parameters: None,
            inputs: None,
            outputs: None,
        };
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Id => keep_first(&mut header.id, &mut map)?,
                Member::Parameters => keep_first(&mut header.parameters, &mut map)?,
                Member::Outputs => keep_first(&mut header.outputs, &mut map)?,
                Member::Inputs if header.inputs.is_none() => {
                    header.inputs = Some(map.next_value_seed(InputsVisitor(self.0))?);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(header)
    }
}

pub(super) struct InputsVisitor<'d>(HeaderSeed<'d>);

impl<'de> DeserializeSeed<'de> for InputsVisitor<'_> {
    type Value = Inputs<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for InputsVisitor<'_> {
    type Value = Inputs<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("'inputs' to be an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut inputs = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(64));
        while let Some(input) = seq.next_element_seed(InputVisitor(self.0))? {
            inputs.push(input);
        }
        Ok(Inputs(inputs))
    }
}

struct InputVisitor<'d>(HeaderSeed<'d>);

impl<'de> DeserializeSeed<'de> for InputVisitor<'_> {
    type Value = InputHeader<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for InputVisitor<'_> {
    type Value = InputHeader<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("each input to be a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut input = InputHeader::default();
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Name => keep_first(&mut input.name, &mut map)?,
                Member::Shape => keep_first(&mut input.shape, &mut map)?,
                Member::Datatype => keep_first(&mut input.datatype, &mut map)?,
                Member::Parameters => keep_first(&mut input.parameters, &mut map)?,
                Member::Data if input.data.is_none() => {
                    input.data = Some(match self.eager_target(&input) {
                        Some((name, datatype, expected)) => {
                            let target = DataTarget {
                                model: self.0.decoder.model_name,
                                name: &name,
                                datatype,
                                expected,
                                specials: self.0.decoder.specials,
                                json_len: self.0.json_len,
                            };
                            InputData::Parsed(map.next_value_seed(DataSeed(&target))?)
                        }
                        None => InputData::Raw(map.next_value()?),
                    });
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(input)
    }
}

impl InputVisitor<'_> {
    /// The name, datatype and element count for parsing `data` now:
    /// when they came before it, are valid, and the tensor is not empty.
    fn eager_target(&self, input: &InputHeader<'_>) -> Option<(String, DataType, usize)> {
        let decoder = self.0.decoder;
        let datatype = DataType::from_wire_name(&decoder.string(input.datatype?)?)?;
        if matches!(datatype, DataType::Fp16 | DataType::Bf16) {
            return None;
        }
        let shape = parse_shape(input.shape?)?;
        let expected = element_count(&shape).filter(|&n| n > 0)?;
        Some((decoder.string(input.name?)?, datatype, expected))
    }
}
