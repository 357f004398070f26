//! Flag defaults from the environment, as `tritonserver` reads them: the
//! Vertex AI variables. `AIP_MODE=PREDICTION` turns the Vertex AI endpoint
//! on and the HTTP and gRPC endpoints off, `AIP_HTTP_PORT` is the Vertex AI
//! port and `AIP_STORAGE_URI` the model repository when no
//! `--model-repository` is given; flags given on the command line win.

use super::options::ServerOptions;

impl ServerOptions {
    /// Applies the environment (`env` reads a variable) to the flags not
    /// given on the command line. Errors: an `AIP_HTTP_PORT` that is not a
    /// port.
    pub(super) fn apply_environment(
        &mut self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        if env("AIP_MODE").as_deref() == Some("PREDICTION") {
            for (flag, allowed, value) in [
                ("allow-vertex-ai", &mut self.vertex_ai.allow_vertex_ai, true),
                ("allow-http", &mut self.http.allow_http, false),
                ("allow-grpc", &mut self.grpc.allow_grpc, false),
            ] {
                if !self.passed.contains(flag) {
                    *allowed = value;
                }
            }
        }
        if let Some(port) = env("AIP_HTTP_PORT")
            && !self.passed.contains("vertex-ai-port")
        {
            self.vertex_ai.vertex_ai_port = port
                .trim()
                .parse()
                .map_err(|_| format!("invalid value for AIP_HTTP_PORT: '{port}' is not a port"))?;
        }
        if self.repository.model_repository.is_empty()
            && let Some(uri) = env("AIP_STORAGE_URI").filter(|uri| !uri.is_empty())
        {
            self.repository.model_repository.push(uri.into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Command, ServerOptions, parse_args};

    fn options(args: &[&str], vars: &[(&str, &str)]) -> Result<ServerOptions, String> {
        let args = std::iter::once("oxiserve").chain(args.iter().copied());
        let Ok(Command::Serve(mut options)) = parse_args(args) else {
            panic!("not a serve command");
        };
        let env = |name: &str| {
            vars.iter()
                .find(|(var, _)| *var == name)
                .map(|(_, value)| value.to_string())
        };
        options.apply_environment(env)?;
        Ok(options)
    }

    #[test]
    fn prediction_mode_turns_vertex_ai_on_and_kserve_off() {
        let o = options(&["--model-repository=/m"], &[("AIP_MODE", "PREDICTION")]).unwrap();
        assert!(o.vertex_ai.allow_vertex_ai && !o.http.allow_http && !o.grpc.allow_grpc);
        let o = options(
            &[
                "--model-repository=/m",
                "--allow-http=true",
                "--allow-vertex-ai=false",
            ],
            &[("AIP_MODE", "PREDICTION")],
        )
        .unwrap();
        assert!(!o.vertex_ai.allow_vertex_ai && o.http.allow_http && !o.grpc.allow_grpc);
        let o = options(&["--model-repository=/m"], &[("AIP_MODE", "TRAINING")]).unwrap();
        assert!(!o.vertex_ai.allow_vertex_ai && o.http.allow_http);
    }

    #[test]
    fn the_port_and_the_repository_come_from_the_environment() {
        let vars = [("AIP_HTTP_PORT", "5234"), ("AIP_STORAGE_URI", "/store")];
        let o = options(&["--model-repository=/m"], &vars).unwrap();
        assert_eq!(o.vertex_ai.vertex_ai_port, 5234);
        assert_eq!(
            o.repository.model_repository,
            [std::path::PathBuf::from("/m")]
        );
        let o = options(&["--model-repository=/m", "--vertex-ai-port=9"], &vars).unwrap();
        assert_eq!(o.vertex_ai.vertex_ai_port, 9);
        let error = options(&["--model-repository=/m"], &[("AIP_HTTP_PORT", "x")]).unwrap_err();
        assert_eq!(error, "invalid value for AIP_HTTP_PORT: 'x' is not a port");
    }
}
