//! TensorFlow's C API (`tensorflow/c/c_api.h`), the few functions this
//! backend calls, resolved from the library at run time. The wheel splits
//! them between `libtensorflow_cc.so.2` and `libtensorflow_framework.so.2`;
//! opening the first opens the second (its `NEEDED` entry), and symbols are
//! looked up through both.

// The C names, so that each item reads as the header declares it.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_void};

use libloading::Library;

/// Declares opaque C types.
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub(crate) struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque!(
    TF_Status,
    TF_Graph,
    TF_Operation,
    TF_Session,
    TF_SessionOptions,
    TF_Tensor,
    TF_ImportGraphDefOptions
);

/// `TF_TString`: 24 bytes, read and written only through the API.
#[repr(C, align(8))]
pub(crate) struct TF_TString {
    _raw: [u8; 24],
}

/// `TF_Buffer`: bytes TensorFlow reads or fills.
#[repr(C)]
pub(crate) struct TF_Buffer {
    pub data: *const c_void,
    pub length: usize,
    pub data_deallocator: Option<unsafe extern "C" fn(*mut c_void, usize)>,
}

/// `TF_Output`: output `index` of an operation.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct TF_Output {
    pub oper: *mut TF_Operation,
    pub index: c_int,
}

/// `TF_DataType`'s values.
pub(crate) type TF_DataType = c_int;

/// `TF_OK`.
pub(crate) const TF_OK: c_int = 0;

/// Declares the function table and how it is read from the library.
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The C API's functions, valid while the library stays open (for
        /// the life of the process: it is never closed).
        pub(crate) struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            _library: Library,
        }

        impl Api {
            /// Resolves every function; names the first one missing.
            pub(crate) fn resolve(library: Library) -> Result<Self, String> {
                $(
                    // SAFETY: the type is the function's C signature in
                    // TensorFlow 2's c_api.h, tf_tensor.h or tf_tstring.h.
                    let $name = unsafe {
                        *library
                            .get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                            .map_err(|e| format!("{} is missing: {e}", stringify!($name)))?
                    };
                )*
                Ok(Self { $($name,)* _library: library })
            }
        }
    };
}

api! {
    TF_Version: fn() -> *const c_char;
    TF_NewStatus: fn() -> *mut TF_Status;
    TF_DeleteStatus: fn(*mut TF_Status);
    TF_GetCode: fn(*const TF_Status) -> c_int;
    TF_Message: fn(*const TF_Status) -> *const c_char;
    TF_NewBuffer: fn() -> *mut TF_Buffer;
    TF_DeleteBuffer: fn(*mut TF_Buffer);
    TF_NewGraph: fn() -> *mut TF_Graph;
    TF_DeleteGraph: fn(*mut TF_Graph);
    TF_NewImportGraphDefOptions: fn() -> *mut TF_ImportGraphDefOptions;
    TF_DeleteImportGraphDefOptions: fn(*mut TF_ImportGraphDefOptions);
    TF_GraphImportGraphDef: fn(*mut TF_Graph, *const TF_Buffer, *const TF_ImportGraphDefOptions, *mut TF_Status);
    TF_GraphOperationByName: fn(*mut TF_Graph, *const c_char) -> *mut TF_Operation;
    TF_GraphNextOperation: fn(*mut TF_Graph, *mut usize) -> *mut TF_Operation;
    TF_OperationName: fn(*mut TF_Operation) -> *const c_char;
    TF_OperationOpType: fn(*mut TF_Operation) -> *const c_char;
    TF_OperationNumOutputs: fn(*mut TF_Operation) -> c_int;
    TF_OperationOutputType: fn(TF_Output) -> TF_DataType;
    TF_NewSessionOptions: fn() -> *mut TF_SessionOptions;
    TF_DeleteSessionOptions: fn(*mut TF_SessionOptions);
    TF_SetConfig: fn(*mut TF_SessionOptions, *const c_void, usize, *mut TF_Status);
    TF_NewSession: fn(*mut TF_Graph, *const TF_SessionOptions, *mut TF_Status) -> *mut TF_Session;
    TF_LoadSessionFromSavedModel: fn(
        *const TF_SessionOptions,
        *const TF_Buffer,
        *const c_char,
        *const *const c_char,
        c_int,
        *mut TF_Graph,
        *mut TF_Buffer,
        *mut TF_Status
    ) -> *mut TF_Session;
    TF_CloseSession: fn(*mut TF_Session, *mut TF_Status);
    TF_DeleteSession: fn(*mut TF_Session, *mut TF_Status);
    TF_SessionRun: fn(
        *mut TF_Session,
        *const TF_Buffer,
        *const TF_Output,
        *const *mut TF_Tensor,
        c_int,
        *const TF_Output,
        *mut *mut TF_Tensor,
        c_int,
        *const *const TF_Operation,
        c_int,
        *mut TF_Buffer,
        *mut TF_Status
    );
    TF_AllocateTensor: fn(TF_DataType, *const i64, c_int, usize) -> *mut TF_Tensor;
    TF_DeleteTensor: fn(*mut TF_Tensor);
    TF_TensorType: fn(*const TF_Tensor) -> TF_DataType;
    TF_NumDims: fn(*const TF_Tensor) -> c_int;
    TF_Dim: fn(*const TF_Tensor, c_int) -> i64;
    TF_TensorByteSize: fn(*const TF_Tensor) -> usize;
    TF_TensorData: fn(*const TF_Tensor) -> *mut c_void;
    TF_StringInit: fn(*mut TF_TString);
    TF_StringCopy: fn(*mut TF_TString, *const c_char, usize);
    TF_StringGetDataPointer: fn(*const TF_TString) -> *const c_char;
    TF_StringGetSize: fn(*const TF_TString) -> usize;
    TF_StringDealloc: fn(*mut TF_TString);
}
