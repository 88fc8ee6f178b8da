import Foundation

// The C ABI of ../../../ffi/oamfm.h (ABI 1.0). Every function is callable from any thread; only
// oamfm_poll waits. Returned strings come from strdup and are released with oamfm_free.

let OAMFM_OK: Int32 = 0
let OAMFM_NOT_FOUND: Int32 = 1
let OAMFM_E_ARG: Int32 = -1
let OAMFM_E_CLOSED: Int32 = -2
let OAMFM_E_REQUEST: Int32 = -3
let OAMFM_E_DUPLICATE: Int32 = -4

let pluginABIMajor: UInt32 = 1
let pluginABIMinor: UInt32 = 0
let pluginVersion = "0.1.0"

@_cdecl("oamfm_abi_version")
public func oamfm_abi_version() -> UInt32 {
    (pluginABIMajor << 16) | pluginABIMinor
}

@_cdecl("oamfm_open")
public func oamfm_open(_ options: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? {
    guard let options, let object = JSON.parseObject(String(cString: options)) else { return nil }
    if let abi = object["abi"] as? [String: Any], let major = JSON.int(abi["major"]), major != Int(pluginABIMajor) {
        return nil
    }
    return HandleTable.shared.insert(Plugin())
}

@_cdecl("oamfm_submit")
public func oamfm_submit(_ handle: UnsafeMutableRawPointer?, _ request: UnsafePointer<CChar>?) -> Int32 {
    guard let handle, let request else { return OAMFM_E_ARG }
    guard let plugin = HandleTable.shared.get(handle) else { return OAMFM_E_CLOSED }
    return plugin.submit(String(cString: request))
}

@_cdecl("oamfm_cancel")
public func oamfm_cancel(_ handle: UnsafeMutableRawPointer?, _ requestID: UnsafePointer<CChar>?) -> Int32 {
    guard let handle, let requestID else { return OAMFM_E_ARG }
    guard let plugin = HandleTable.shared.get(handle) else { return OAMFM_E_CLOSED }
    return plugin.cancel(String(cString: requestID))
}

@_cdecl("oamfm_poll")
public func oamfm_poll(_ handle: UnsafeMutableRawPointer?, _ timeoutMs: Int32) -> UnsafeMutablePointer<CChar>? {
    guard let plugin = HandleTable.shared.get(handle), let batch = plugin.poll(timeoutMs: timeoutMs) else {
        return nil
    }
    return strdup(batch)
}

@_cdecl("oamfm_free")
public func oamfm_free(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

@_cdecl("oamfm_close")
public func oamfm_close(_ handle: UnsafeMutableRawPointer?) {
    HandleTable.shared.remove(handle)?.close()
}
