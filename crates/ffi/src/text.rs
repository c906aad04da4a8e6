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

// The bytes start HEADER bytes into a 16-aligned block: the header must fit
// there and need no more alignment than the block has.
const _: () =
    assert!(std::mem::size_of::<Header>() <= HEADER && std::mem::align_of::<Header>() <= 16);

/// One counted reference to a text block.
pub struct Text(NonNull<Header>);

// SAFETY: a block is immutable after `concat` except for its atomic `refs`
// (and `magic`, cleared only by the last owner just before it deallocates),
// so handing a reference to another thread is like moving an `Arc<str>`.
unsafe impl Send for Text {}
// SAFETY: `&Text` only reads immutable bytes and header fields, or bumps
// `refs` atomically (clone); it is `Arc<str>`-like.
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
        // Checked: a wrapped size would make the copies below write out of
        // bounds (only reachable with pieces summing past usize::MAX).
        let len = pieces
            .iter()
            .try_fold(0usize, |n, p| n.checked_add(p.len()))
            .and_then(|n| n.checked_add(HEADER + 1).map(|_| n))
            .expect("text length overflows usize");
        let size = HEADER + len + 1;
        // SAFETY: `size` did not overflow (checked above); `layout(size)` (it
        // panics past isize::MAX) is non-zero-sized (size > HEADER) and 16-aligned,
        // enough for Header (asserted above). A NULL from alloc diverges via
        // handle_alloc_error. The header is written (not assigned) into fresh
        // memory; the pieces are copied into the `len` bytes after HEADER,
        // which are in bounds, then the NUL at HEADER + len, the last byte.
        // Fresh memory cannot overlap the borrowed `pieces`. The bytes are
        // valid UTF-8 because every piece is a `str`.
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
        // SAFETY: `self` holds a counted reference, so the block is live and
        // its header initialised; `len` is never written after `concat`.
        unsafe { self.0.as_ref().len }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_str(&self) -> &str {
        // SAFETY: the block stays live while `self` (and so the returned
        // borrow) lives; its `len` bytes after HEADER were initialised from
        // `str`s in `concat` and are never written again, so they are valid,
        // immutable UTF-8 inside the allocation.
        unsafe {
            let data = (self.0.as_ptr() as *const u8).add(HEADER);
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(data, self.len()))
        }
    }

    /// Hand the reference to C: pointer to the bytes plus length.
    pub fn into_raw(self) -> (*mut std::ffi::c_char, usize) {
        let len = self.len();
        // SAFETY: the block is live and at least HEADER + 1 bytes long, so
        // the offset stays inside the allocation.
        let p = unsafe { (self.0.as_ptr() as *mut u8).add(HEADER) };
        std::mem::forget(self);
        (p as *mut std::ffi::c_char, len)
    }

    /// Drop a reference handed out by `into_raw`. Returns false (and frees
    /// nothing) when `p` does not point at a live text block of ours.
    ///
    /// # Safety
    /// `p` must be NULL or a pointer returned by `into_raw` whose reference
    /// has not been freed yet. The magic check is only a best-effort
    /// diagnostic for host bugs: with any other pointer the read before it is
    /// already undefined behaviour.
    pub unsafe fn free_raw(p: *mut std::ffi::c_char) -> bool {
        if p.is_null() {
            return true;
        }
        // SAFETY: by the contract `p` is HEADER bytes into a live block
        // returned by `into_raw`, so stepping back lands on its header, at
        // the start of the same allocation.
        let h = unsafe { (p as *mut u8).sub(HEADER) as *mut Header };
        // SAFETY: `h` points at the initialised, aligned header of that live block.
        if unsafe { (*h).magic } != MAGIC {
            return false;
        }
        // SAFETY: `h` is derived from a non-NULL `p` by an in-bounds offset,
        // so it is non-NULL; rebuilding the Text takes back the reference
        // `into_raw` forgot, and dropping it releases that reference once.
        drop(Text(unsafe { NonNull::new_unchecked(h) }));
        true
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl hermes_core::definitions::TextBlock for Text {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Clone for Text {
    fn clone(&self) -> Text {
        // SAFETY: `self` holds a reference, so the block is live. Relaxed is
        // enough for an increment, as in `Arc::clone`: the new reference is
        // derived from one this thread already holds.
        unsafe { self.0.as_ref().refs.fetch_add(1, Ordering::Relaxed) };
        Text(self.0)
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        // SAFETY: the block is live while `self` holds its reference. Only the
        // holder of the last reference (the one whose decrement saw 1) goes on,
        // so no other `Text` can reach the block; the Release decrement plus
        // the Acquire fence order every other holder's use before the free (as
        // in `Arc::drop`). `size` is the size it was allocated with, so the
        // layout passed to dealloc matches the one passed to alloc.
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
            // SAFETY: `p` comes from into_raw: a live block whose bytes end in NUL.
            unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap(),
            "hello"
        );
        // SAFETY: `p` is from into_raw and freed only here.
        assert!(unsafe { Text::free_raw(p) });
        assert_eq!(t.as_str(), "hello");
        drop(t);
        // SAFETY: NULL is always accepted.
        assert!(unsafe { Text::free_raw(std::ptr::null_mut()) });
    }
}
