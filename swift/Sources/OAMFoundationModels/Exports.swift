import OAMCore

// The seven C functions of ../../../ffi/oamfm.h. Everything but the backend lives in OAMCore.

#if canImport(FoundationModels)
func makeBackend(_ options: OpenOptions) -> any PluginBackend { FoundationModelsBackend(options: options) }
#else
/// No FoundationModels here (Linux, or an SDK without it): the stand-in plays the test double's scripts.
func makeBackend(_ options: OpenOptions) -> any PluginBackend { ScriptedBackend(options: options) }
#endif

@_cdecl("oamfm_abi_version")
public func oamfm_abi_version() -> UInt32 {
    PluginABI.version()
}

@_cdecl("oamfm_open")
public func oamfm_open(_ options: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? {
    PluginABI.open(options, makeBackend: makeBackend)
}

@_cdecl("oamfm_submit")
public func oamfm_submit(_ handle: UnsafeMutableRawPointer?, _ request: UnsafePointer<CChar>?) -> Int32 {
    PluginABI.submit(handle, request)
}

@_cdecl("oamfm_cancel")
public func oamfm_cancel(_ handle: UnsafeMutableRawPointer?, _ requestID: UnsafePointer<CChar>?) -> Int32 {
    PluginABI.cancel(handle, requestID)
}

@_cdecl("oamfm_poll")
public func oamfm_poll(_ handle: UnsafeMutableRawPointer?, _ timeoutMs: Int32) -> UnsafeMutablePointer<CChar>? {
    PluginABI.poll(handle, timeoutMs)
}

@_cdecl("oamfm_free")
public func oamfm_free(_ string: UnsafeMutablePointer<CChar>?) {
    PluginABI.release(string)
}

@_cdecl("oamfm_close")
public func oamfm_close(_ handle: UnsafeMutableRawPointer?) {
    PluginABI.close(handle)
}
