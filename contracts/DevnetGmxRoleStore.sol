// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxErrors, GmxKeys} from "DevnetGmxCommon.sol";

/// @notice GMX v2's RoleStore for the devnet: `hasRole(account, roleKey)` with GMX's role keys
/// (keccak256(abi.encode("CONTROLLER")), "ORDER_KEEPER", "ROUTER_PLUGIN", "ROLE_ADMIN"); a ROLE_ADMIN grants and
/// revokes. The constructor makes `admin` the first ROLE_ADMIN.
contract DevnetGmxRoleStore {
    mapping(address => mapping(bytes32 => bool)) private roles;

    event RoleGranted(address indexed account, bytes32 indexed roleKey);
    event RoleRevoked(address indexed account, bytes32 indexed roleKey);

    constructor(address admin) {
        roles[admin][GmxKeys.ROLE_ADMIN] = true;
        emit RoleGranted(admin, GmxKeys.ROLE_ADMIN);
    }

    modifier onlyRoleAdmin() {
        if (!roles[msg.sender][GmxKeys.ROLE_ADMIN]) revert GmxErrors.Unauthorized(msg.sender, "ROLE_ADMIN");
        _;
    }

    function hasRole(address account, bytes32 roleKey) external view returns (bool) {
        return roles[account][roleKey];
    }

    function grantRole(address account, bytes32 roleKey) external onlyRoleAdmin {
        roles[account][roleKey] = true;
        emit RoleGranted(account, roleKey);
    }

    function revokeRole(address account, bytes32 roleKey) external onlyRoleAdmin {
        roles[account][roleKey] = false;
        emit RoleRevoked(account, roleKey);
    }
}
