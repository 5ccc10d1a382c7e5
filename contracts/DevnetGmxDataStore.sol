// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxErrors, GmxKeys, IGmxRoleStore} from "DevnetGmxCommon.sol";

/// @notice GMX v2's DataStore for the devnet: typed values and sets under bytes32 keys, the real getters'
/// selectors and return types, setters for CONTROLLERs only. The devnet's contracts keep all their config and
/// state here under GMX's own key scheme (Keys.sol), so a client reading the real keys finds them.
contract DevnetGmxDataStore {
    IGmxRoleStore public immutable roleStore;

    mapping(bytes32 => uint256) public uintValues;
    mapping(bytes32 => int256) public intValues;
    mapping(bytes32 => address) public addressValues;
    mapping(bytes32 => bool) public boolValues;
    mapping(bytes32 => bytes32) public bytes32Values;

    struct Set {
        bytes32[] values;
        mapping(bytes32 => uint256) indexPlusOne;
    }

    mapping(bytes32 => Set) private bytes32Sets;
    mapping(bytes32 => Set) private addressSets;

    constructor(IGmxRoleStore roleStore_) {
        roleStore = roleStore_;
    }

    modifier onlyController() {
        if (!roleStore.hasRole(msg.sender, GmxKeys.CONTROLLER)) revert GmxErrors.Unauthorized(msg.sender, "CONTROLLER");
        _;
    }

    function getUint(bytes32 key) external view returns (uint256) { return uintValues[key]; }
    function getInt(bytes32 key) external view returns (int256) { return intValues[key]; }
    function getAddress(bytes32 key) external view returns (address) { return addressValues[key]; }
    function getBool(bytes32 key) external view returns (bool) { return boolValues[key]; }
    function getBytes32(bytes32 key) external view returns (bytes32) { return bytes32Values[key]; }

    function setUint(bytes32 key, uint256 value) external onlyController returns (uint256) {
        uintValues[key] = value;
        return value;
    }

    function removeUint(bytes32 key) external onlyController {
        delete uintValues[key];
    }

    function incrementUint(bytes32 key, uint256 value) external onlyController returns (uint256) {
        uint256 next = uintValues[key] + value;
        uintValues[key] = next;
        return next;
    }

    function applyDeltaToUint(bytes32 key, int256 value, string memory errorMessage) external onlyController returns (uint256) {
        uint256 current = uintValues[key];
        if (value < 0 && uint256(-value) > current) revert(errorMessage);
        uint256 next = value < 0 ? current - uint256(-value) : current + uint256(value);
        uintValues[key] = next;
        return next;
    }

    function setInt(bytes32 key, int256 value) external onlyController returns (int256) {
        intValues[key] = value;
        return value;
    }

    function setAddress(bytes32 key, address value) external onlyController returns (address) {
        addressValues[key] = value;
        return value;
    }

    function setBool(bytes32 key, bool value) external onlyController returns (bool) {
        boolValues[key] = value;
        return value;
    }

    function setBytes32(bytes32 key, bytes32 value) external onlyController returns (bytes32) {
        bytes32Values[key] = value;
        return value;
    }

    // ---- bytes32 sets ----
    function containsBytes32(bytes32 setKey, bytes32 value) external view returns (bool) {
        return bytes32Sets[setKey].indexPlusOne[value] != 0;
    }

    function getBytes32Count(bytes32 setKey) external view returns (uint256) {
        return bytes32Sets[setKey].values.length;
    }

    function getBytes32ValuesAt(bytes32 setKey, uint256 start, uint256 end) external view returns (bytes32[] memory) {
        return _valuesAt(bytes32Sets[setKey], start, end);
    }

    function addBytes32(bytes32 setKey, bytes32 value) external onlyController {
        _add(bytes32Sets[setKey], value);
    }

    function removeBytes32(bytes32 setKey, bytes32 value) external onlyController {
        _remove(bytes32Sets[setKey], value);
    }

    // ---- address sets (MARKET_LIST) ----
    function containsAddress(bytes32 setKey, address value) external view returns (bool) {
        return addressSets[setKey].indexPlusOne[bytes32(uint256(uint160(value)))] != 0;
    }

    function getAddressCount(bytes32 setKey) external view returns (uint256) {
        return addressSets[setKey].values.length;
    }

    function getAddressValuesAt(bytes32 setKey, uint256 start, uint256 end) external view returns (address[] memory out) {
        bytes32[] memory raw = _valuesAt(addressSets[setKey], start, end);
        out = new address[](raw.length);
        for (uint256 i = 0; i < raw.length; i++) out[i] = address(uint160(uint256(raw[i])));
    }

    function addAddress(bytes32 setKey, address value) external onlyController {
        _add(addressSets[setKey], bytes32(uint256(uint160(value))));
    }

    function removeAddress(bytes32 setKey, address value) external onlyController {
        _remove(addressSets[setKey], bytes32(uint256(uint160(value))));
    }

    function _valuesAt(Set storage set, uint256 start, uint256 end) private view returns (bytes32[] memory out) {
        uint256 length = set.values.length;
        if (end > length) end = length;
        if (start >= end) return new bytes32[](0);
        out = new bytes32[](end - start);
        for (uint256 i = start; i < end; i++) out[i - start] = set.values[i];
    }

    function _add(Set storage set, bytes32 value) private {
        if (set.indexPlusOne[value] != 0) return;
        set.values.push(value);
        set.indexPlusOne[value] = set.values.length;
    }

    function _remove(Set storage set, bytes32 value) private {
        uint256 at = set.indexPlusOne[value];
        if (at == 0) return;
        uint256 last = set.values.length;
        if (at != last) {
            bytes32 moved = set.values[last - 1];
            set.values[at - 1] = moved;
            set.indexPlusOne[moved] = at;
        }
        set.values.pop();
        delete set.indexPlusOne[value];
    }
}
