//! Owned TensorFlow objects: a status, a graph and the session that runs
//! it, opened from a SavedModel folder or a GraphDef file.

use std::{
    ffi::{CStr, CString, c_int},
    path::Path,
    ptr,
};

use crate::{
    capi::{
        Api, TF_Buffer, TF_DataType, TF_Graph, TF_OK, TF_Operation, TF_Output, TF_Session,
        TF_Status, TF_Tensor,
    },
    tensor::Tensor,
};

/// A `TF_Status`, read after each call that fills it.
struct Status {
    api: &'static Api,
    raw: *mut TF_Status,
}

impl Status {
    fn new(api: &'static Api) -> Self {
        // SAFETY: no preconditions.
        let raw = unsafe { (api.TF_NewStatus)() };
        Self { api, raw }
    }

    /// `Err` with TensorFlow's message when the last call failed.
    fn result(&self) -> Result<(), String> {
        // SAFETY: `raw` is a live status.
        if unsafe { (self.api.TF_GetCode)(self.raw) } == TF_OK {
            return Ok(());
        }
        // SAFETY: the message is a NUL-terminated string owned by the
        // status, copied before the status changes.
        let message = unsafe { CStr::from_ptr((self.api.TF_Message)(self.raw)) };
        Err(message.to_string_lossy().into_owned())
    }
}

impl Drop for Status {
    fn drop(&mut self) {
        // SAFETY: created by TF_NewStatus, deleted once.
        unsafe { (self.api.TF_DeleteStatus)(self.raw) }
    }
}

/// A `TF_Graph` with its session; operations are looked up by name.
pub(crate) struct Session {
    api: &'static Api,
    session: *mut TF_Session,
    graph: *mut TF_Graph,
}

// SAFETY: TensorFlow sessions and graphs are thread-safe (TF_SessionRun may
// be called from several threads at once, and the graph is not changed
// after the session is created).
unsafe impl Send for Session {}
// SAFETY: as above.
unsafe impl Sync for Session {}

/// An operation of a graph as TensorFlow reports it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OperationInfo {
    pub name: String,
    pub op_type: String,
}

impl Session {
    /// Loads the SavedModel folder `dir`'s graph tagged `tag`, with its
    /// variables; returns its serialized `MetaGraphDef` as well.
    pub(crate) fn saved_model(
        api: &'static Api,
        config: &[u8],
        dir: &Path,
        tag: &str,
    ) -> Result<(Self, Vec<u8>), String> {
        let dir = c_path(dir)?;
        let tag = CString::new(tag).map_err(|_| "the graph tag holds a NUL byte".to_string())?;
        let tags = [tag.as_ptr()];
        let status = Status::new(api);
        let options = SessionOptions::new(api, config, &status)?;
        // SAFETY: no preconditions; both are deleted below or by Drop.
        let (graph, meta_graph) = unsafe { ((api.TF_NewGraph)(), (api.TF_NewBuffer)()) };
        // SAFETY: every pointer is live for the call; TensorFlow copies
        // what it keeps and fills `meta_graph`.
        let session = unsafe {
            (api.TF_LoadSessionFromSavedModel)(
                options.raw,
                ptr::null(),
                dir.as_ptr(),
                tags.as_ptr(),
                1,
                graph,
                meta_graph,
                status.raw,
            )
        };
        // SAFETY: TensorFlow filled `meta_graph` with `length` bytes at `data`
        // (or left it empty); they are copied before the buffer is deleted.
        let bytes = unsafe {
            let buffer = &*meta_graph;
            let bytes = if buffer.data.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(buffer.data.cast::<u8>(), buffer.length).to_vec()
            };
            (api.TF_DeleteBuffer)(meta_graph);
            bytes
        };
        let opened = Self {
            api,
            session,
            graph,
        };
        status.result()?;
        Ok((opened, bytes))
    }

    /// Imports the GraphDef file `file` and opens a session on it.
    pub(crate) fn graph_def(api: &'static Api, config: &[u8], file: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(file).map_err(|e| format!("could not read it: {e}"))?;
        let status = Status::new(api);
        let options = SessionOptions::new(api, config, &status)?;
        // SAFETY: no preconditions; deleted by Drop (or below).
        let graph = unsafe { (api.TF_NewGraph)() };
        let mut opened = Self {
            api,
            session: ptr::null_mut(),
            graph,
        };
        let buffer = TF_Buffer {
            data: bytes.as_ptr().cast(),
            length: bytes.len(),
            data_deallocator: None,
        };
        // SAFETY: the buffer's bytes outlive the call, which copies what
        // it keeps; the options are deleted right after.
        unsafe {
            let import = (api.TF_NewImportGraphDefOptions)();
            (api.TF_GraphImportGraphDef)(graph, &buffer, import, status.raw);
            (api.TF_DeleteImportGraphDefOptions)(import);
        }
        status
            .result()
            .map_err(|e| format!("it is not a GraphDef TensorFlow can import: {e}"))?;
        // SAFETY: the graph and options are live.
        opened.session = unsafe { (api.TF_NewSession)(graph, options.raw, status.raw) };
        status.result()?;
        Ok(opened)
    }

    /// The operation called `name`, if the graph has one.
    pub(crate) fn operation(&self, name: &str) -> Option<*mut TF_Operation> {
        let name = CString::new(name).ok()?;
        // SAFETY: the graph is live; the name is NUL-terminated.
        let op = unsafe { (self.api.TF_GraphOperationByName)(self.graph, name.as_ptr()) };
        (!op.is_null()).then_some(op)
    }

    /// The tensor `name` (`operation:index` or `operation`, index 0).
    pub(crate) fn output(&self, name: &str) -> Option<TF_Output> {
        let (op, index) = match name.rsplit_once(':') {
            Some((op, index)) if index.parse::<c_int>().is_ok() => (op, index.parse().ok()?),
            _ => (name, 0),
        };
        let oper = self.operation(op)?;
        // SAFETY: `oper` belongs to this live graph.
        let outputs = unsafe { (self.api.TF_OperationNumOutputs)(oper) };
        (index < outputs).then_some(TF_Output { oper, index })
    }

    /// The datatype of a tensor of the graph.
    pub(crate) fn output_type(&self, output: TF_Output) -> TF_DataType {
        // SAFETY: `output` names an output of this live graph.
        unsafe { (self.api.TF_OperationOutputType)(output) }
    }

    /// Every operation of the graph, in the graph's order.
    pub(crate) fn operations(&self) -> Vec<OperationInfo> {
        let mut position = 0usize;
        let mut all = Vec::new();
        loop {
            // SAFETY: the graph is live; `position` is the API's cursor.
            let op = unsafe { (self.api.TF_GraphNextOperation)(self.graph, &mut position) };
            if op.is_null() {
                return all;
            }
            // SAFETY: both strings are NUL-terminated and owned by the graph.
            let (name, op_type) = unsafe {
                (
                    CStr::from_ptr((self.api.TF_OperationName)(op)),
                    CStr::from_ptr((self.api.TF_OperationOpType)(op)),
                )
            };
            all.push(OperationInfo {
                name: name.to_string_lossy().into_owned(),
                op_type: op_type.to_string_lossy().into_owned(),
            });
        }
    }

    /// Runs the graph: `feeds` in, `fetches` out, `targets` run for their
    /// effects; the results in the order of `fetches`.
    pub(crate) fn run(
        &self,
        feeds: &[(TF_Output, &Tensor)],
        fetches: &[TF_Output],
        targets: &[*mut TF_Operation],
    ) -> Result<Vec<Tensor>, String> {
        let inputs: Vec<TF_Output> = feeds.iter().map(|(output, _)| *output).collect();
        let values: Vec<*mut TF_Tensor> = feeds.iter().map(|(_, tensor)| tensor.raw()).collect();
        let targets: Vec<*const TF_Operation> = targets.iter().map(|&t| t.cast_const()).collect();
        let mut results: Vec<*mut TF_Tensor> = vec![ptr::null_mut(); fetches.len()];
        let status = Status::new(self.api);
        // SAFETY: every array holds as many elements as its count says; the
        // input tensors stay owned by the caller; TensorFlow fills `results`
        // with tensors the caller then owns.
        unsafe {
            (self.api.TF_SessionRun)(
                self.session,
                ptr::null(),
                inputs.as_ptr(),
                values.as_ptr(),
                len(&inputs),
                fetches.as_ptr(),
                results.as_mut_ptr(),
                len(fetches),
                targets.as_ptr(),
                len(&targets),
                ptr::null_mut(),
                status.raw,
            );
        }
        let owned: Vec<Tensor> = results
            .into_iter()
            .filter(|t| !t.is_null())
            // SAFETY: each result is a tensor TensorFlow handed over.
            .map(|t| unsafe { Tensor::from_raw(self.api, t) })
            .collect();
        status.result()?;
        Ok(owned)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let status = Status::new(self.api);
        // SAFETY: the session (if any) is closed and deleted before its
        // graph; each is deleted once.
        unsafe {
            if !self.session.is_null() {
                (self.api.TF_CloseSession)(self.session, status.raw);
                (self.api.TF_DeleteSession)(self.session, status.raw);
            }
            (self.api.TF_DeleteGraph)(self.graph);
        }
    }
}

/// `TF_SessionOptions` holding a serialized `ConfigProto`.
struct SessionOptions {
    api: &'static Api,
    raw: *mut crate::capi::TF_SessionOptions,
}

impl SessionOptions {
    fn new(api: &'static Api, config: &[u8], status: &Status) -> Result<Self, String> {
        // SAFETY: no preconditions; deleted by Drop.
        let options = Self {
            api,
            raw: unsafe { (api.TF_NewSessionOptions)() },
        };
        // SAFETY: `config` holds `len` bytes, which TensorFlow parses.
        unsafe {
            (api.TF_SetConfig)(
                options.raw,
                config.as_ptr().cast(),
                config.len(),
                status.raw,
            );
        }
        status
            .result()
            .map_err(|e| format!("the session options were refused: {e}"))?;
        Ok(options)
    }
}

impl Drop for SessionOptions {
    fn drop(&mut self) {
        // SAFETY: created by TF_NewSessionOptions, deleted once.
        unsafe { (self.api.TF_DeleteSessionOptions)(self.raw) }
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("the path {} holds a NUL byte", path.display()))
}

fn len<T>(items: &[T]) -> c_int {
    c_int::try_from(items.len()).unwrap_or(c_int::MAX)
}
