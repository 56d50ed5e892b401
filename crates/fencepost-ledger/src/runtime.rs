//! A ledger connection's own async runtime.

/// A connection's own small runtime (PostgreSQL's driver and the object store are async;
/// the ledger's callers are not).
pub(crate) struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl OwnRuntime {
    pub(crate) fn new() -> std::io::Result<OwnRuntime> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(OwnRuntime(Some(rt)))
    }

    /// Runs `f` to completion. A caller that is itself inside a runtime (deploy, whose store
    /// is async, records its steps from there) cannot block that thread on another runtime,
    /// so `f` then runs on a short-lived thread of its own.
    pub(crate) fn block<F: std::future::Future + Send>(&self, f: F) -> F::Output
    where
        F::Output: Send,
    {
        let rt = self.0.as_ref().expect("the runtime lives until dropped");
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| rt.block_on(f))
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        } else {
            rt.block_on(f)
        }
    }
}

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        // A runtime cannot be dropped (it would block) inside another one's async context.
        if let Some(rt) = self.0.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                rt.shutdown_background();
            }
        }
    }
}
