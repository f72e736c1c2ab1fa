//! The `extern "C"` exports and the host import: the only module with `unsafe` (raw
//! pointers into the module's own memory, handed over by the host).
//!
//! Ownership: `gangpack_alloc(len)` gives the host a buffer of exactly `len` bytes; an
//! operation takes its request buffer back (frees it) and returns a new response
//! buffer, `(ptr << 32) | len`, which the host frees with `gangpack_free(ptr, len)`.
//! Every buffer is a `Box<[u8]>` of its exact length, so `(ptr, len)` rebuilds it.
#![allow(unsafe_code, reason = "the C ABI: raw pointers the host hands over")]
#![allow(
    unreachable_pub,
    reason = "exported by `#[unsafe(no_mangle)]`, not by path"
)]

use std::sync::{Mutex, Once};

use crate::ops::{self, Host};

/// The message and location of the last panic, for `gangpack_last_panic`.
static LAST_PANIC: Mutex<String> = Mutex::new(String::new());
static HOOK: Once = Once::new();

/// Records a panic's message before the module traps (panic = abort).
fn install_hook() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = info.to_string();
            }
        }));
    });
}

/// A buffer handed to the host: `(ptr << 32) | len`.
fn give(bytes: Box<[u8]>) -> u64 {
    let len = bytes.len() as u64;
    let ptr = Box::into_raw(bytes).cast::<u8>() as usize as u64;
    (ptr << 32) | len
}

/// Takes back a buffer the host got from [`gangpack_alloc`] or an operation.
///
/// # Safety
/// `ptr` and `len` must be one such buffer, not freed yet.
unsafe fn take(ptr: u32, len: u32) -> Box<[u8]> {
    let slice = std::ptr::slice_from_raw_parts_mut(ptr as usize as *mut u8, len as usize);
    // SAFETY: the caller guarantees (ptr, len) is a live Box<[u8]> made by `give` or
    // `gangpack_alloc`, of exactly this length, whose ownership it hands back.
    unsafe { Box::from_raw(slice) }
}

/// A buffer of `len` bytes for the host to write a request into.
#[unsafe(no_mangle)]
pub extern "C" fn gangpack_alloc(len: u32) -> u32 {
    install_hook();
    let bytes = vec![0u8; len as usize].into_boxed_slice();
    (give(bytes) >> 32) as u32
}

/// Frees a buffer from [`gangpack_alloc`] or a response.
///
/// # Safety
/// `(ptr, len)` must be such a buffer, not freed yet (the host's contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gangpack_free(ptr: u32, len: u32) {
    // SAFETY: the host frees only what it was given, once.
    drop(unsafe { take(ptr, len) });
}

/// The last panic's message (empty when none), as a response buffer.
#[unsafe(no_mangle)]
pub extern "C" fn gangpack_last_panic() -> u64 {
    let text = LAST_PANIC.lock().map(|m| m.clone()).unwrap_or_default();
    give(text.into_bytes().into_boxed_slice())
}

#[link(wasm_import_module = "gangpack_host")]
unsafe extern "C" {
    /// The host's judge: 1 still fails, 0 passes, 2 stop.
    #[link_name = "judge"]
    fn host_judge(ctx: u64, ptr: *const u8, len: usize) -> i32;
}

/// The host of this module: its imports.
struct Imports;

impl Host for Imports {
    fn judge(&mut self, ctx: u64, candidate: &str) -> i32 {
        // SAFETY: the pointer and length describe `candidate`, alive for the call; the
        // host only reads them.
        unsafe { host_judge(ctx, candidate.as_ptr(), candidate.len()) }
    }
}

/// Runs `op` on the request buffer `(ptr, len)`, which it frees.
fn run(op: &str, ptr: u32, len: u32) -> u64 {
    install_hook();
    // SAFETY: the host hands over a buffer from `gangpack_alloc` (the contract).
    let request = unsafe { take(ptr, len) };
    let response = ops::call(op, &request, &mut Imports);
    drop(request);
    give(response.into_bytes().into_boxed_slice())
}

macro_rules! operations {
    ($($name:ident => $op:literal),* $(,)?) => {
        $(
            #[doc = concat!("The `", $op, "` operation (see the crate docs).")]
            ///
            /// # Safety
            /// `(ptr, len)` must be a buffer from [`gangpack_alloc`], which this frees.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name(ptr: u32, len: u32) -> u64 {
                run($op, ptr, len)
            }
        )*
    };
}

operations! {
    gangpack_plan => "plan",
    gangpack_explain => "explain",
    gangpack_check => "check",
    gangpack_diff => "diff",
    gangpack_capacity => "capacity",
    gangpack_taint => "taint",
    gangpack_gen => "gen",
    gangpack_shrink => "shrink",
    gangpack_cli => "cli",
    gangpack_allocate => "allocate",
    gangpack_version => "version",
    gangpack_session_new => "session_new",
    gangpack_session_call => "session_call",
    gangpack_session_free => "session_free",
}
