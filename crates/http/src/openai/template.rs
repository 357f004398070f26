//! Chat messages -> the prompt. A model with a chat template (Jinja, in its
//! config parameter `chat_template`) gets the template rendered as Hugging
//! Face renders it: `messages`, `add_generation_prompt` true, `bos_token`
//! and `eos_token` from the config parameters of those names (when given),
//! blocks trimmed, `raise_exception(message)`, and Python's string methods
//! (`.strip()`, `.startswith()`, ...). A model without one gets the plain
//! join: `<role>: <content>` lines, then `assistant:`.

use minijinja::{Environment, ErrorKind, syntax::SyntaxConfig};
use oxiserve_proto::ModelConfig;
use serde_json::{Map, Value};

use super::error::{OpenAiError, OpenAiResult};

/// The config parameter holding the template.
pub(super) const CHAT_TEMPLATE: &str = "chat_template";
/// The config parameters handed to the template as variables of their names.
const TOKENS: [&str; 2] = ["bos_token", "eos_token"];

/// The prompt of `messages` (objects whose `content` is a string) for model
/// `name`. A template that does not compile is the model's fault (500); one
/// that fails on these messages is the request's (400).
pub(super) fn chat_prompt(
    name: &str,
    config: &ModelConfig,
    messages: &[Value],
) -> OpenAiResult<String> {
    let parameter = |key: &str| {
        config
            .parameters
            .get(key)
            .map(|value| value.string_value.as_str())
    };
    let Some(template) = parameter(CHAT_TEMPLATE) else {
        return Ok(plain_join(messages));
    };
    let mut context = Map::new();
    context.insert("messages".into(), Value::Array(messages.to_vec()));
    context.insert("add_generation_prompt".into(), Value::Bool(true));
    for token in TOKENS {
        if let Some(value) = parameter(token) {
            context.insert(token.into(), Value::String(value.into()));
        }
    }
    render(template, &context).map_err(|e| {
        let detail = e
            .detail()
            .map_or_else(|| e.to_string(), |detail| format!("{e}: {detail}"));
        if e.kind() == ErrorKind::SyntaxError {
            OpenAiError::internal(format!(
                "the chat template of model '{name}' (config parameter '{CHAT_TEMPLATE}') \
                 is not a valid template: {detail}"
            ))
        } else {
            OpenAiError::invalid(
                Some("messages"),
                format!("the chat template of model '{name}' failed on these messages: {detail}"),
            )
        }
    })
}

/// `template` rendered with `context`, in an environment like Hugging
/// Face's.
fn render(template: &str, context: &Map<String, Value>) -> Result<String, minijinja::Error> {
    let mut env = Environment::new();
    env.set_syntax(
        SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()?,
    );
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    env.render_str(template, minijinja::value::Serde(context))
}

/// The prompt of a model without a template: one `<role>: <content>` line
/// per message, then `assistant:`.
fn plain_join(messages: &[Value]) -> String {
    let mut prompt = String::new();
    for message in messages {
        let role = message["role"].as_str().unwrap_or_default();
        let content = message["content"].as_str().unwrap_or_default();
        prompt.push_str(&format!("{role}: {content}\n"));
    }
    prompt.push_str("assistant:");
    prompt
}

#[cfg(test)]
mod tests {
    use oxiserve_proto::inference::ModelParameter;
    use serde_json::json;

    use super::*;

    fn config(parameters: &[(&str, &str)]) -> ModelConfig {
        let mut config = ModelConfig::default();
        for (key, value) in parameters {
            config.parameters.insert(
                key.to_string(),
                ModelParameter {
                    string_value: value.to_string(),
                },
            );
        }
        config
    }

    fn messages() -> Vec<Value> {
        vec![
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": "  Hi  "}),
        ]
    }

    #[test]
    fn without_a_template_messages_are_joined() {
        let prompt = chat_prompt("m", &config(&[]), &messages()).unwrap();
        assert_eq!(prompt, "system: Be brief.\nuser:   Hi  \nassistant:");
    }

    #[test]
    fn templates_render_as_hugging_face_renders_them() {
        let template = "{{ bos_token }}{% for m in messages %}\n\
            <|{{ m['role'] }}|>{{ m.content.strip() }}{{ eos_token }}\n\
            {% endfor %}\n\
            {% if add_generation_prompt %}<|assistant|>{% endif %}";
        let config = config(&[
            (CHAT_TEMPLATE, template),
            ("bos_token", "<s>"),
            ("eos_token", "</s>"),
        ]);
        let prompt = chat_prompt("m", &config, &messages()).unwrap();
        assert_eq!(
            prompt,
            "<s><|system|>Be brief.</s>\n<|user|>Hi</s>\n<|assistant|>"
        );
    }

    #[test]
    fn tokens_not_given_are_undefined() {
        let config = config(&[(CHAT_TEMPLATE, "[{{ bos_token }}]{{ eos_token is defined }}")]);
        assert_eq!(chat_prompt("m", &config, &[]).unwrap(), "[]False");
    }

    #[test]
    fn raised_exceptions_are_the_request_s_fault() {
        let template = "{% if messages[0].role == 'system' %}\
            {{ raise_exception('System role not supported') }}{% endif %}";
        let error =
            chat_prompt("m", &config(&[(CHAT_TEMPLATE, template)]), &messages()).unwrap_err();
        assert_eq!(error.status, 400);
        assert!(
            error.message.contains("System role not supported"),
            "{}",
            error.message
        );
        assert_eq!(error.param.as_deref(), Some("messages"));
    }

    #[test]
    fn templates_that_do_not_compile_are_the_model_s_fault() {
        let config = config(&[(CHAT_TEMPLATE, "{% for m in messages %}")]);
        let error = chat_prompt("m", &config, &messages()).unwrap_err();
        assert_eq!(error.status, 500);
        assert!(
            error.message.contains("is not a valid template"),
            "{}",
            error.message
        );
    }
}
