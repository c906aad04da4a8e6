//! Text handed to the host: a reference-counted block with a header in front
//! of NUL-terminated UTF-8. Every string the library returns is one of these
//! and is freed with `ht_string_free`, which drops one reference. Because
//! blocks are shared, cached definitions are handed out without copying.

use std::alloc::{Layout, alloc, dealloc};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering, fence};

const MAGIC: u64 = 0x6874_5f74_6578_7421; // "ht_text!"
const HEADER: usize = 32;

#[repr(C)]
struct Header {
    magic: u64,
    refs: AtomicUsize,
    len: usize,
    size: usize,
}

/// One counted reference to a text block.
pub struct Text(NonNull<Header>);

unsafe impl Send for Text {}
unsafe impl Sync for Text {}

fn layout(size: usize) -> Layout {
    Layout::from_size_align(size, 16).expect("text layout")
}

impl Text {
    pub fn new(s: &str) -> Text {
        Text::concat(&[s])
    }

    /// One block holding the concatenation of `pieces` (no intermediate copy).
    pub fn concat(pieces: &[&str]) -> Text {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        let size = HEADER + len + 1;
        unsafe {
            let p = alloc(layout(size)) as *mut Header;
            let Some(nn) = NonNull::new(p) else {
                std::alloc::handle_alloc_error(layout(size));
            };
            p.write(Header {
                magic: MAGIC,
                refs: AtomicUsize::new(1),
                len,
                size,
            });
            let mut dst = (p as *mut u8).add(HEADER);
            for piece in pieces {
                std::ptr::copy_nonoverlapping(piece.as_ptr(), dst, piece.len());
                dst = dst.add(piece.len());
            }
            *dst = 0;
            Text(nn)
        }
    }

    pub fn len(&self) -> usize {
        unsafe { self.0.as_ref().len }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_str(&self) -> &str {
        unsafe {
            let data = (self.0.as_ptr() as *const u8).add(HEADER);
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(data, self.len()))
        }
    }

    /// Hand the reference to C: pointer to the bytes plus length.
    pub fn into_raw(self) -> (*mut std::ffi::c_char, usize) {
        let len = self.len();
        let p = unsafe { (self.0.as_ptr() as *mut u8).add(HEADER) };
        std::mem::forget(self);
        (p as *mut std::ffi::c_char, len)
    }

    /// Drop a reference handed out by `into_raw`. Returns false (and frees
    /// nothing) when `p` does not point at a live text block of ours.
    ///
    /// # Safety
    /// `p` must be NULL or a pointer returned by `into_raw` not yet freed.
    pub unsafe fn free_raw(p: *mut std::ffi::c_char) -> bool {
        if p.is_null() {
            return true;
        }
        let h = unsafe { (p as *mut u8).sub(HEADER) as *mut Header };
        if unsafe { (*h).magic } != MAGIC {
            return false;
        }
        drop(Text(unsafe { NonNull::new_unchecked(h) }));
        true
    }
}

impl Clone for Text {
    fn clone(&self) -> Text {
        unsafe { self.0.as_ref().refs.fetch_add(1, Ordering::Relaxed) };
        Text(self.0)
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        unsafe {
            if self.0.as_ref().refs.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
            let p = self.0.as_ptr();
            let size = (*p).size;
            (*p).magic = 0;
            dealloc(p as *mut u8, layout(size));
        }
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_blocks_free_once() {
        let t = Text::new("hello");
        let (p, len) = t.clone().into_raw();
        assert_eq!(len, 5);
        assert_eq!(
            unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap(),
            "hello"
        );
        assert!(unsafe { Text::free_raw(p) });
        assert_eq!(t.as_str(), "hello");
        drop(t);
        assert!(unsafe { Text::free_raw(std::ptr::null_mut()) });
    }
}
